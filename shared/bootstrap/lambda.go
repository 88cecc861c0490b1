package bootstrap

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"time"

	"github.com/agentpack/gateway/shared/db"
	"github.com/agentpack/gateway/shared/dbsecret"
	"github.com/aws/aws-lambda-go/cfn"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
)

// PhysicalResourceID is the custom resource's physical id (the same on every Create and
// Update: a changed id would make CloudFormation delete the "old" resource).
const PhysicalResourceID = "agentpack-database-bootstrap"

// Reserve is how long before the Lambda deadline a run gives up, so that the FAILED
// answer still reaches CloudFormation (a function killed at its timeout answers nothing
// and CloudFormation waits for the custom resource's ServiceTimeout).
const Reserve = 30 * time.Second

// maxReason bounds the Reason sent to CloudFormation (a whole response is at most 4,096
// bytes; the wrapper adds the other fields).
const maxReason = 2000

// Opener opens a pool to the database itself (never RDS Proxy: goose's lock is a session
// advisory lock; docs/DATABASE.md).
type Opener func(ctx context.Context) (*db.Pool, error)

// Handler is the custom resource's function for cfn.LambdaWrap (docs/DEPLOY.md):
//
//   - Create and Update run Run with the event's ResourceProperties FirstAdminEmail and
//     FirstWorkspaceName and answer SUCCESS with PhysicalResourceID and the attributes
//     SchemaVersion, WorkspaceId and FirstAdmin; any error answers FAILED with the error as
//     the reason (at most 2,000 bytes), which fails the deploy and rolls it back.
//   - Delete answers SUCCESS at once and touches nothing: deleting the stack keeps the
//     data (the database itself has its own deletion policy, a snapshot).
//
// The run's context ends Reserve before the invocation's deadline.
func Handler(migrations fs.FS, open Opener, log *slog.Logger) cfn.CustomResourceFunction {
	return func(ctx context.Context, ev cfn.Event) (string, map[string]any, error) {
		id := ev.PhysicalResourceID
		if ev.RequestType == cfn.RequestCreate || id == "" {
			id = PhysicalResourceID
		}
		log.Info("custom resource", "request_type", ev.RequestType, "logical_id", ev.LogicalResourceID,
			"physical_id", id)
		if ev.RequestType == cfn.RequestDelete {
			return id, nil, nil
		}
		if dl, ok := ctx.Deadline(); ok {
			var cancel context.CancelFunc
			ctx, cancel = context.WithDeadline(ctx, dl.Add(-Reserve))
			defer cancel()
		}
		res, err := func() (*Result, error) {
			pool, err := open(ctx)
			if err != nil {
				return nil, fmt.Errorf("connect to the database: %w", err)
			}
			defer pool.Close()
			return Run(ctx, pool, Options{Migrations: migrations,
				FirstAdminEmail:    prop(ev.ResourceProperties, "FirstAdminEmail"),
				FirstWorkspaceName: prop(ev.ResourceProperties, "FirstWorkspaceName")})
		}()
		if err != nil {
			if errors.Is(err, context.DeadlineExceeded) {
				err = fmt.Errorf("%w (the run stops %s before the function's timeout)", err, Reserve)
			}
			log.Error("bootstrap failed", "err", err.Error())
			return id, nil, errors.New(truncate(err.Error(), maxReason))
		}
		log.Info("bootstrap done", "schema_version", res.SchemaVersion, "workspace_id", res.WorkspaceID,
			"first_admin", res.FirstAdmin)
		return id, map[string]any{"SchemaVersion": fmt.Sprint(res.SchemaVersion), "WorkspaceId": res.WorkspaceID,
			"FirstAdmin": res.FirstAdmin}, nil
	}
}

// OpenFromEnv opens a pool of 2 connections to DATABASE_URL, else to the URL built from
// DATABASE_SECRET_ARN with DATABASE_HOST/PORT/NAME/SSLMODE (dbsecret.DatabaseURL);
// the template points DATABASE_HOST at the instance's own endpoint, not the proxy's.
func OpenFromEnv(ctx context.Context) (*db.Pool, error) {
	url := os.Getenv("DATABASE_URL")
	if url == "" {
		arn := os.Getenv("DATABASE_SECRET_ARN")
		if arn == "" {
			return nil, errors.New("neither DATABASE_URL nor DATABASE_SECRET_ARN is set")
		}
		ac, err := awsconfig.LoadDefaultConfig(ctx)
		if err != nil {
			return nil, fmt.Errorf("aws config: %w", err)
		}
		if url, err = dbsecret.DatabaseURL(ctx, secretsmanager.NewFromConfig(ac), arn); err != nil {
			return nil, err
		}
	}
	return db.Open(ctx, url, 2)
}

func prop(p map[string]any, k string) string {
	s, _ := p[k].(string)
	return s
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n-len(" …")] + " …"
}
