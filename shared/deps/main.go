package deps

import (
	"context"
	"fmt"
	"os"

	"github.com/agentpack/gateway/shared/config"
)

// Main is every function's main: it loads the configuration, builds the dependencies
// (pool of at most 2 connections: one Lambda execution environment serves one request
// at a time; RDS Proxy fans in), runs fn, and on an error prints "<name>: <error>" to
// stderr and exits 1. Dependencies are closed when fn returns.
func Main(name string, fn func(ctx context.Context, d *Deps) error) {
	ctx := context.Background()
	err := func() error {
		cfg, err := config.Load()
		if err != nil {
			return err
		}
		d, err := Build(ctx, cfg, 2)
		if err != nil {
			return err
		}
		defer d.Close()
		return fn(ctx, d)
	}()
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
		os.Exit(1)
	}
}
