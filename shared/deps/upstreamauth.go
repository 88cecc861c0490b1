package deps

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/agentpack/gateway/shared/upstreamauth"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/kms"
)

// CallbackPath and ClientMetadataPath are the marketplace function's upstream-auth routes.
const (
	CallbackPath       = "/api/oauth/callback"
	ClientMetadataPath = "/api/oauth/client-metadata.json"
	// ConsentPagePath is the console's consent page; the link id follows it.
	ConsentPagePath = "/admin/#/consent/"
)

// buildAuth wires upstream authorization (docs/UPSTREAM-AUTH.md): tokens sealed with the
// KMS key UPSTREAM_AUTH_KMS_KEY_ID, or locally with the key file UPSTREAM_AUTH_KEY_FILE;
// every URL of the flow through the process's URL guard; the redirect URI is
// PUBLIC_BASE_URL + CallbackPath. Deployed without a KMS key or without PUBLIC_BASE_URL it is
// left off (OAuth installs then answer "not configured"): a key file is not a place for
// production secrets, and a redirect URI cannot be guessed.
func (d *Deps) buildAuth(ctx context.Context) error {
	cfg := d.Config
	if cfg.Deployed() && cfg.PublicBaseURL == "" {
		// The redirect URI must be the API's public URL, registered with each authorization
		// server; deployed, it cannot be guessed.
		d.Logger.WarnContext(ctx, "upstream authorization disabled: PUBLIC_BASE_URL is not set")
		return nil
	}
	var sealer upstreamauth.Sealer
	switch {
	case cfg.UpstreamAuthKMSKeyID != "":
		ac, err := awsconfig.LoadDefaultConfig(ctx)
		if err != nil {
			return fmt.Errorf("deps: aws config: %w", err)
		}
		sealer = upstreamauth.NewKMSSealer(kms.NewFromConfig(ac), cfg.UpstreamAuthKMSKeyID)
	case cfg.Deployed():
		d.Logger.WarnContext(ctx, "upstream authorization disabled: UPSTREAM_AUTH_KMS_KEY_ID is not set")
		return nil
	default:
		s, err := upstreamauth.NewKeyFileSealer(cfg.UpstreamAuthKeyFile)
		if err != nil {
			return fmt.Errorf("deps: upstream auth key file: %w", err)
		}
		sealer = s
	}
	base := cfg.PublicBaseURL
	if base == "" {
		base = "http://127.0.0.1:" + cfg.Port
	}
	store := upstreamauth.NewDBStore(d.Pool, sealer)
	opts := upstreamauth.Options{
		Store:       store,
		HTTPClient:  d.Guard.HTTPClient(15 * time.Second),
		CheckURL:    d.Guard.CheckURL,
		RedirectURL: base + CallbackPath,
		// The link a caller receives opens the console's consent page, which signs the
		// browser in and lets only the link's user through (docs/UPSTREAM-AUTH.md).
		ConsentURL: base + ConsentPagePath,
		Logger:     d.Logger,
	}
	if strings.HasPrefix(base, "https://") {
		opts.ClientMetadataURL = base + ClientMetadataPath
	}
	d.Auth = upstreamauth.New(opts)
	d.Connections.Auth = d.Auth
	d.Connections.AuthClients = store.ClientGet
	d.Connections.AuthClientPut = store.ClientPut
	return nil
}
