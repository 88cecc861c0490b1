package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	"github.com/agentpack/gateway/functions/mcp/gateway"
	"github.com/agentpack/gateway/functions/mcp/gateway/tasks"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/lambda/types"
)

// taskEventKey names the member of the event the gateway sends itself to run a task
// (events/mcp-task.json).
const taskEventKey = "agentpackTask"

// selfInvoker starts a task's worker as an asynchronous invocation (InvocationType Event)
// of this function (AWS_LAMBDA_FUNCTION_NAME): it runs under the function's full timeout,
// apart from the request that created the task, which API Gateway ends after 29 s. The
// template grants lambda:InvokeFunction on the function itself.
func selfInvoker(ctx context.Context) (func(context.Context, tasks.Job) error, error) {
	name := os.Getenv("AWS_LAMBDA_FUNCTION_NAME")
	if name == "" {
		return nil, fmt.Errorf("AWS_LAMBDA_FUNCTION_NAME is not set")
	}
	cfg, err := config.LoadDefaultConfig(ctx)
	if err != nil {
		return nil, err
	}
	client := lambda.NewFromConfig(cfg)
	return func(ctx context.Context, job tasks.Job) error {
		payload, err := json.Marshal(map[string]any{taskEventKey: job})
		if err != nil {
			return err
		}
		_, err = client.Invoke(ctx, &lambda.InvokeInput{
			FunctionName: aws.String(name), InvocationType: types.InvocationTypeEvent, Payload: payload,
		})
		return err
	}, nil
}

// runTaskEvent runs the task of one self-invocation event.
func runTaskEvent(g *gateway.Gateway) func(context.Context, json.RawMessage) error {
	return func(ctx context.Context, payload json.RawMessage) error {
		var job tasks.Job
		if err := json.Unmarshal(payload, &job); err != nil || job.TaskID == "" {
			return fmt.Errorf("mcp: task event is not a task job: %v", err)
		}
		return g.RunTask(ctx, job)
	}
}
