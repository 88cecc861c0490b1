// Command pins is the per-chat pins REST Lambda function (DESIGN §2, §7):
// /api/chats/{chatId}/pins* and /api/chats/{chatId}/tools.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/agentpack/gateway/functions/pins/api"
	"github.com/agentpack/gateway/shared/catalog"
	"github.com/agentpack/gateway/shared/config"
	"github.com/agentpack/gateway/shared/deps"
	"github.com/agentpack/gateway/shared/lambdaapp"
	"github.com/agentpack/gateway/shared/pins"
)

func main() {
	if err := run(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, "pins:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context) error {
	cfg, err := config.Load()
	if err != nil {
		return err
	}
	d, err := deps.Build(ctx, cfg, 2)
	if err != nil {
		return err
	}
	defer d.Close()
	a := &api.API{Pins: &pins.Service{Pool: d.Pool, Logger: d.Logger},
		Catalog: catalog.NewCache(d.Store, cfg.CatalogTTL, d.Logger), Verifier: d.Verifier, Logger: d.Logger}
	return lambdaapp.Start(ctx, a.Handler(), "127.0.0.1:"+cfg.Port, d.Logger)
}
