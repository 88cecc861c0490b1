package connections

import (
	"context"
	"encoding/json"

	"github.com/agentpack/gateway/shared/apperr"
	"github.com/agentpack/gateway/shared/auth"
	"github.com/agentpack/gateway/shared/db"
	"github.com/agentpack/gateway/shared/derrors"
	"github.com/agentpack/gateway/shared/upstreamauth"
)

// A catalog entry's upstream authorization defaults (docs/UPSTREAM-AUTH.md): the auth mode
// new installs of the entry get and the entry's pre-registered OAuth client.

// EntryAuthInput is the body of PUT /api/mcp-marketplace/{id}/auth: a catalog entry's
// default auth mode and, optionally, its pre-registered OAuth client.
type EntryAuthInput struct {
	AuthMode string       `json:"authMode" enum:"none,headers,oauth,oauth_per_user,client_credentials" doc:"Default auth mode of new installs of this entry."`
	Client   *EntryClient `json:"client,omitempty" doc:"A client pre-registered with the upstream's authorization server. clientSecret / privateKeyPem are stored encrypted and never returned (hasSecret says whether one is stored)."`
	// OAuth, when set, replaces the entry's OAuth settings (expected issuer or metadata URL,
	// scopes, extra authorization parameters), the default of its connections.
	OAuth *OAuthSettings `json:"oauth,omitempty"`
}

// EntryClient is a pre-registered client as written (secrets in) and shown (secrets out:
// only HasSecret).
type EntryClient struct {
	ClientID          string   `json:"clientId"`
	ClientSecret      string   `json:"clientSecret,omitempty"`
	PrivateKeyPEM     string   `json:"privateKeyPem,omitempty"`
	TokenEndpointAuth string   `json:"tokenEndpointAuth,omitempty"`
	SigningAlg        string   `json:"signingAlg,omitempty"`
	Issuer            string   `json:"issuer,omitempty"`
	Scopes            []string `json:"scopes,omitempty"`
	HasSecret         bool     `json:"hasSecret,omitempty"`
}

// SetEntryAuth sets catalog entry entryID's default auth mode and pre-registered client
// (superuser: the catalog is shared by every workspace). The answer never carries the
// secret. Existing connections keep their own mode. Errors: FORBIDDEN, NOT_FOUND,
// VALIDATION_ERROR.
func (s *Service) SetEntryAuth(ctx context.Context, p *auth.Principal, entryID string, in EntryAuthInput) (_ *EntryAuthInput, err error) {
	defer derrors.Wrap(&err, "connections: set authorization of entry %s", entryID)
	if !p.IsSuperuser() {
		return nil, apperr.New(apperr.Forbidden, "editing the shared catalog requires the superuser role")
	}
	if err := validMode(in.AuthMode); err != nil {
		return nil, err
	}
	if c := in.Client; c != nil {
		switch {
		case c.ClientID == "" || len(c.ClientID) > 512:
			return nil, apperr.New(apperr.Validation, "client.clientId is required (at most 512 characters)")
		case len(c.ClientSecret) > 4096 || len(c.PrivateKeyPEM) > 16384:
			return nil, apperr.New(apperr.Validation, "client secret or key too long")
		}
		switch c.TokenEndpointAuth {
		case "", upstreamauth.AuthNone, upstreamauth.AuthClientSecretBasic, upstreamauth.AuthClientSecretPost:
			if c.PrivateKeyPEM != "" {
				return nil, apperr.New(apperr.Validation, "client.privateKeyPem needs tokenEndpointAuth private_key_jwt")
			}
		case upstreamauth.AuthPrivateKeyJWT:
			if c.PrivateKeyPEM == "" {
				return nil, apperr.New(apperr.Validation, "private_key_jwt needs client.privateKeyPem")
			}
		default:
			return nil, apperr.New(apperr.Validation, "client.tokenEndpointAuth must be none, client_secret_basic, client_secret_post or private_key_jwt")
		}
		if c.Issuer != "" {
			if err := s.Guard.CheckURL(c.Issuer); err != nil {
				return nil, err
			}
		}
		if s.AuthClientPut == nil {
			return nil, apperr.New(apperr.Unavailable, "upstream authorization is not configured on this gateway")
		}
	}
	var settingsRaw []byte
	if in.OAuth != nil {
		if err := s.validSettings(in.OAuth); err != nil {
			return nil, err
		}
		if settingsRaw, err = json.Marshal(in.OAuth); err != nil {
			return nil, err
		}
	}
	err = db.InTx(ctx, s.Pool, func(tx db.Tx) error {
		if _, err := db.CatalogEntryGet(ctx, tx, entryID); err != nil {
			return err
		}
		if err := db.CatalogEntryAuthModeSet(ctx, tx, entryID, in.AuthMode); err != nil {
			return err
		}
		payload := map[string]any{"authMode": in.AuthMode}
		if settingsRaw != nil {
			if err := db.OAuthSettingsPut(ctx, tx, entryID, true, settingsRaw); err != nil {
				return err
			}
			payload["oauth"] = in.OAuth
		}
		if c := in.Client; c != nil {
			if err := s.AuthClientPut(ctx, tx, entryID, &upstreamauth.Client{ClientID: c.ClientID, ClientSecret: c.ClientSecret,
				PrivateKeyPEM: c.PrivateKeyPEM, TokenEndpointAuth: c.TokenEndpointAuth, SigningAlg: c.SigningAlg,
				Issuer: c.Issuer, Scopes: c.Scopes}); err != nil {
				return err
			}
			payload["clientId"] = c.ClientID
			payload["tokenEndpointAuth"] = c.TokenEndpointAuth
		}
		return db.EventInsert(ctx, tx, &db.Event{EntityType: "mcp_catalog_entry", EntityID: entryID,
			Action: "mcp.catalog_entry_auth_updated", Actor: p.Subject, Payload: payload})
	})
	if err != nil {
		return nil, err
	}
	out := &EntryAuthInput{AuthMode: in.AuthMode, OAuth: in.OAuth}
	if c := in.Client; c != nil {
		out.Client = &EntryClient{ClientID: c.ClientID, TokenEndpointAuth: c.TokenEndpointAuth, SigningAlg: c.SigningAlg,
			Issuer: c.Issuer, Scopes: c.Scopes, HasSecret: c.ClientSecret != "" || c.PrivateKeyPEM != ""}
	}
	return out, nil
}

// EntryAuth is GET /api/mcp-marketplace/{id}/auth: catalog entry entryID's default auth
// mode, its OAuth settings (omitted when none are set) and its pre-registered client
// (omitted when none; the secret and key never leave: only HasSecret). Superuser, as
// SetEntryAuth. Errors: FORBIDDEN, NOT_FOUND.
func (s *Service) EntryAuth(ctx context.Context, p *auth.Principal, entryID string) (_ *EntryAuthInput, err error) {
	defer derrors.Wrap(&err, "connections: authorization of entry %s", entryID)
	if !p.IsSuperuser() {
		return nil, apperr.New(apperr.Forbidden, "editing the shared catalog requires the superuser role")
	}
	mode, err := db.CatalogEntryAuthModeGet(ctx, s.Pool, entryID)
	if err != nil {
		return nil, err
	}
	out := &EntryAuthInput{AuthMode: mode}
	set, err := s.settingsOf(ctx, s.Pool, entryID, true)
	if err != nil {
		return nil, err
	}
	if !set.IsZero() {
		out.OAuth = &set
	}
	if s.AuthClients != nil {
		c, err := s.AuthClients(ctx, entryID)
		if err != nil {
			return nil, err
		}
		if c != nil && c.ClientID != "" {
			out.Client = &EntryClient{ClientID: c.ClientID, TokenEndpointAuth: c.TokenEndpointAuth, SigningAlg: c.SigningAlg,
				Issuer: c.Issuer, Scopes: c.Scopes, HasSecret: c.ClientSecret != "" || c.PrivateKeyPEM != ""}
		}
	}
	return out, nil
}
