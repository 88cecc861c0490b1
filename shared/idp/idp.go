// Package idp is the deployment's list of trusted enterprise identity providers: the
// issuers whose ID-JAGs (draft-ietf-oauth-identity-assertion-authz-grant) the gateway's
// authorization server exchanges for access tokens without a consent page (docs/AUTH.md
// "The enterprise path"). A superuser manages it (REST /api/trusted-idps); TRUSTED_IDPS
// seeds it (Seed).
package idp

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/url"
	"strings"

	"github.com/agentpack/gateway/shared/apperr"
	"github.com/agentpack/gateway/shared/auth"
	"github.com/agentpack/gateway/shared/db"
	"github.com/agentpack/gateway/shared/derrors"
)

// Provider is a trusted identity provider (db.TrustedIDP).
type Provider = db.TrustedIDP

// Input is what a superuser sets: every field, replacing the provider of Issuer.
type Input struct {
	Issuer           string   `json:"issuer" doc:"The ID-JAGs' iss, exactly as the identity provider writes it (https; e.g. https://acme.okta.com)."`
	JWKSURL          string   `json:"jwksUrl" doc:"The identity provider's JWKS (https), e.g. https://acme.okta.com/oauth2/v1/keys."`
	AllowedClientIDs []string `json:"allowedClientIds,omitempty" doc:"Client ids (of this gateway's authorization server) its ID-JAGs may name; empty = any. At most 100."`
	LinkByEmail      bool     `json:"linkByEmail,omitempty" doc:"Match an unknown (iss, sub) to the person with the ID-JAG's email, verified at sign-in. Only for a provider that owns its users' email domains."`
	Enabled          *bool    `json:"enabled,omitempty" doc:"Default true; false refuses its ID-JAGs (invalid_grant) and keeps the entry."`
}

// Service reads and changes the list in Postgres.
type Service struct {
	Pool *db.Pool
}

func requireSuperuser(p *auth.Principal) error {
	if p == nil || !p.IsSuperuser() {
		return apperr.New(apperr.Forbidden, "only a superuser manages the trusted identity providers")
	}
	return nil
}

// List returns every provider, ordered by issuer. FORBIDDEN unless p is a superuser.
func (s *Service) List(ctx context.Context, p *auth.Principal) (_ []Provider, err error) {
	defer derrors.Wrap(&err, "idp: list")
	if err := requireSuperuser(p); err != nil {
		return nil, err
	}
	ps, err := db.TrustedIDPList(ctx, s.Pool)
	if ps == nil {
		ps = []Provider{}
	}
	return ps, err
}

// Put creates or replaces the provider of in.Issuer. FORBIDDEN unless p is a superuser;
// VALIDATION_ERROR for an issuer or JWKS URL that is not an absolute https URL (http for a
// loopback host only), or more than 100 client ids.
func (s *Service) Put(ctx context.Context, p *auth.Principal, in Input) (_ *Provider, err error) {
	defer derrors.Wrap(&err, "idp: put %s", in.Issuer)
	if err := requireSuperuser(p); err != nil {
		return nil, err
	}
	if err := in.check(); err != nil {
		return nil, err
	}
	return db.TrustedIDPPut(ctx, s.Pool, in.provider())
}

// Delete removes the provider of issuer: its ID-JAGs are refused from then on (the access
// tokens already issued live out their lifetime; revoke the connected clients to end them
// at once). FORBIDDEN unless p is a superuser; NOT_FOUND when there is none.
func (s *Service) Delete(ctx context.Context, p *auth.Principal, issuer string) (err error) {
	defer derrors.Wrap(&err, "idp: delete %s", issuer)
	if err := requireSuperuser(p); err != nil {
		return err
	}
	err = db.TrustedIDPDelete(ctx, s.Pool, issuer)
	if apperr.CodeOf(err) == apperr.NotFound {
		return apperr.New(apperr.NotFound, "no trusted identity provider has that issuer")
	}
	return err
}

// Seed adds every provider of the JSON array js (the TRUSTED_IDPS setting: objects of
// Input's shape) whose issuer is not in the list yet; a provider already there is left as
// a superuser last set it (a cold start must not re-enable what was disabled). "" seeds
// nothing. Errors: the JSON or a provider is invalid (VALIDATION_ERROR,
// naming its index), or the database's.
func (s *Service) Seed(ctx context.Context, js string) (err error) {
	defer derrors.Wrap(&err, "idp: seed")
	if strings.TrimSpace(js) == "" {
		return nil
	}
	var ins []Input
	if err := json.Unmarshal([]byte(js), &ins); err != nil {
		return apperr.Wrap(err, apperr.Validation, "TRUSTED_IDPS is not a JSON array of identity providers")
	}
	for i, in := range ins {
		if err := in.check(); err != nil {
			return apperr.Wrap(err, apperr.Validation, "TRUSTED_IDPS[%d]: %s", i, apperr.Public(err).Message)
		}
	}
	return db.InTx(ctx, s.Pool, func(tx db.Tx) error {
		for _, in := range ins {
			if _, err := db.TrustedIDPInsertIfAbsent(ctx, tx, in.provider()); err != nil {
				return err
			}
		}
		return nil
	})
}

func (in Input) provider() *Provider {
	on := in.Enabled == nil || *in.Enabled
	return &Provider{Issuer: in.Issuer, JWKSURL: in.JWKSURL, AllowedClientIDs: in.AllowedClientIDs,
		LinkByEmail: in.LinkByEmail, Enabled: on}
}

func (in Input) check() error {
	for k, v := range map[string]string{"issuer": in.Issuer, "jwksUrl": in.JWKSURL} {
		if err := checkURL(v); err != nil {
			return apperr.New(apperr.Validation, "%s %s", k, err)
		}
	}
	if len(in.AllowedClientIDs) > 100 {
		return apperr.New(apperr.Validation, "allowedClientIds lists more than 100 clients")
	}
	for _, c := range in.AllowedClientIDs {
		if c == "" || len(c) > 2048 {
			return apperr.New(apperr.Validation, "allowedClientIds holds an empty or over-long client id")
		}
	}
	return nil
}

// checkURL requires an absolute https URL without user info or fragment, at most 2048
// bytes; http is admitted for a loopback host (local runs and tests).
func checkURL(v string) error {
	u, err := url.Parse(v)
	if err != nil || !u.IsAbs() || u.Host == "" || u.User != nil || u.Fragment != "" || len(v) > 2048 {
		return fmt.Errorf("must be an absolute https URL")
	}
	switch u.Scheme {
	case "https":
		return nil
	case "http":
		if ip := net.ParseIP(u.Hostname()); u.Hostname() == "localhost" || (ip != nil && ip.IsLoopback()) {
			return nil
		}
	}
	return fmt.Errorf("must be an https URL")
}
