package dbsecret

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/agentpack/gateway/shared/testpeer"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
)

// motoSecrets starts moto_server (a real AWS API endpoint, on every machine of this
// project) on a loopback port and returns a Secrets Manager client for it.
func motoSecrets(t *testing.T) *secretsmanager.Client {
	t.Helper()
	url := testpeer.Moto(t)
	return secretsmanager.New(secretsmanager.Options{
		Region: "us-east-1", BaseEndpoint: aws.String(url),
		Credentials: credentials.NewStaticCredentialsProvider("test", "test", ""),
	})
}

func TestDatabaseURL(t *testing.T) {
	sm := motoSecrets(t)
	tests := []struct {
		name, secret, host, want, wantErr string
	}{
		{name: "proxy host wins", secret: `{"username":"app","password":"p@ss:w/rd","host":"instance.rds","port":5432,"dbname":"x"}`,
			host: "proxy.rds", want: "postgres://app:p%40ss%3Aw%2Frd@proxy.rds:5432/agentpack?sslmode=require"},
		{name: "secret host", secret: `{"username":"app","password":"pw","host":"instance.rds"}`,
			want: "postgres://app:pw@instance.rds:5432/agentpack?sslmode=require"},
		{name: "no password", secret: `{"username":"app","host":"h"}`, wantErr: "lacks"},
		{name: "not json", secret: `nope`, wantErr: "not JSON"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := sm.CreateSecret(context.Background(), &secretsmanager.CreateSecretInput{
				Name: aws.String(fmt.Sprintf("db-%d-%d", i, time.Now().UnixNano())), SecretString: aws.String(tt.secret)})
			if err != nil {
				t.Fatal(err)
			}
			t.Setenv("DATABASE_HOST", tt.host)
			t.Setenv("DATABASE_NAME", "agentpack")
			t.Setenv("DATABASE_PORT", "")
			t.Setenv("DATABASE_SSLMODE", "")
			got, err := DatabaseURL(t.Context(), sm, aws.ToString(out.ARN))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("got %q, %v; want %q", got, err, tt.want)
			}
		})
	}
	if _, err := DatabaseURL(t.Context(), sm, "arn:aws:secretsmanager:us-east-1:123456789012:secret:missing"); err == nil {
		t.Fatal("a missing secret was not an error")
	}
}
