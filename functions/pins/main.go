// Command pins is the per-chat pins REST Lambda function (docs/DESIGN.md §2, §7):
// /api/chats/{chatId}/pins* and /api/chats/{chatId}/tools.
package main

import (
	"context"

	"github.com/agentpack/gateway/functions/pins/api"
	"github.com/agentpack/gateway/shared/deps"
	"github.com/agentpack/gateway/shared/httpapi"
	"github.com/agentpack/gateway/shared/lambdaapp"
)

func main() {
	deps.Main("pins", func(ctx context.Context, d *deps.Deps) error {
		if err := d.RequireVerifier(); err != nil {
			return err
		}
		a := &api.API{Pins: d.Pins,
			Catalog: d.CatalogCache(), Verifier: d.Verifier, Logger: d.Logger}
		if d.SigningKey != nil {
			// The console's tokens of the gateway's authorization server (docs/AUTH.md).
			a.Console = httpapi.Bearer{PublicBaseURL: d.Config.PublicBaseURL, Grants: d.Grants}
		}
		return lambdaapp.Start(ctx, a.Handler(), "127.0.0.1:"+d.Config.Port, d.Logger)
	})
}
