// Package dbsecret builds the Postgres URL of a deployed function from the RDS instance's
// Secrets Manager secret. It is a leaf (the AWS SDK and the standard library only), so both
// the functions' wiring (shared/deps) and the migration's custom resource
// (shared/bootstrap) use it.
package dbsecret

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
)

// dbSecret is the Secrets Manager secret of the RDS instance (template.yaml): username
// and password, plus host/port/dbname that CloudFormation adds.
type dbSecret struct {
	Username string `json:"username"`
	Password string `json:"password"`
	Host     string `json:"host"`
	Port     any    `json:"port"`
	DBName   string `json:"dbname"`
}

// SecretGetter is the part of the Secrets Manager client DatabaseURL uses (shared/deps
// reads its other secrets through it too).
type SecretGetter interface {
	GetSecretValue(ctx context.Context, in *secretsmanager.GetSecretValueInput, opts ...func(*secretsmanager.Options)) (*secretsmanager.GetSecretValueOutput, error)
}

// DatabaseURL builds the Postgres URL of a deployed function (infra/README.md):
// credentials from the secret arn, host/port/database from DATABASE_HOST, DATABASE_PORT and
// DATABASE_NAME when set (they name the RDS Proxy, which the functions must go through),
// else the secret's own, and sslmode from DATABASE_SSLMODE (default require). It returns
// an error naming what is missing; the password never appears in it.
func DatabaseURL(ctx context.Context, sm SecretGetter, arn string) (string, error) {
	out, err := sm.GetSecretValue(ctx, &secretsmanager.GetSecretValueInput{SecretId: aws.String(arn)})
	if err != nil {
		return "", fmt.Errorf("dbsecret: read database secret: %w", err)
	}
	var s dbSecret
	if err := json.Unmarshal([]byte(aws.ToString(out.SecretString)), &s); err != nil {
		return "", fmt.Errorf("dbsecret: database secret is not JSON")
	}
	host := firstSet(os.Getenv("DATABASE_HOST"), s.Host)
	port := firstSet(os.Getenv("DATABASE_PORT"), fmt.Sprint(valueOr(s.Port, "5432")))
	name := firstSet(os.Getenv("DATABASE_NAME"), s.DBName, "agentpack")
	if s.Username == "" || s.Password == "" || host == "" {
		return "", fmt.Errorf("dbsecret: database secret lacks username, password or host")
	}
	u := url.URL{Scheme: "postgres", User: url.UserPassword(s.Username, s.Password), Host: host + ":" + port, Path: "/" + name,
		RawQuery: "sslmode=" + firstSet(os.Getenv("DATABASE_SSLMODE"), "require")}
	return u.String(), nil
}

func firstSet(vs ...string) string {
	for _, v := range vs {
		if v != "" {
			return v
		}
	}
	return ""
}

func valueOr(v any, def string) any {
	if v == nil || v == "" {
		return def
	}
	if f, ok := v.(float64); ok {
		return int(f)
	}
	return v
}
