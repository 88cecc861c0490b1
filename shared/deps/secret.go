package deps

import (
	"context"
	"fmt"

	"github.com/agentpack/gateway/shared/dbsecret"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
)

func newSecretsClient(ctx context.Context) (dbsecret.SecretGetter, error) {
	cfg, err := awsconfig.LoadDefaultConfig(ctx)
	if err != nil {
		return nil, fmt.Errorf("deps: aws config: %w", err)
	}
	return secretsmanager.NewFromConfig(cfg), nil
}
