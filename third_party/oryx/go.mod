module github.com/ory/x

go 1.22

require (
	github.com/pkg/errors v0.9.1
	go.opentelemetry.io/otel v1.47.0
	go.opentelemetry.io/otel/trace v1.47.0
)
