package identity

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/coreos/go-oidc/v3/oidc"
)

// The mapping of a verified ID token's claims to the Claims a sign-in records (the one part
// of the OIDC sign-in that no library does besides the flow's state; oidc.go).

// idClaims are the ID token claims a sign-in reads (the groups claim apart).
type idClaims struct {
	Email             string          `json:"email"`
	EmailVerified     json.RawMessage `json:"email_verified"`
	Name              string          `json:"name"`
	GivenName         string          `json:"given_name"`
	FamilyName        string          `json:"family_name"`
	PreferredUsername string          `json:"preferred_username"`
}

// claims maps the verified ID token to Claims: email (verified when email_verified is
// true or "true" — Cognito sends a string — or, with TrustEmail, absent), name (name, else
// given and family name, else preferred_username), and the groups claim (a list of
// strings, or one string).
func (s *SignIn) claims(idt *oidc.IDToken) (Claims, error) {
	var c idClaims
	if err := idt.Claims(&c); err != nil {
		return Claims{}, errors.New("the ID token's claims cannot be read")
	}
	out := Claims{Issuer: idt.Issuer, Subject: idt.Subject, Email: c.Email, Name: c.Name}
	switch v := strings.Trim(string(c.EmailVerified), `"`); v {
	case "true":
		out.EmailVerified = true
	case "":
		out.EmailVerified = s.cfg.TrustEmail
	}
	if out.Name == "" {
		out.Name = strings.TrimSpace(c.GivenName + " " + c.FamilyName)
	}
	if out.Name == "" {
		out.Name = c.PreferredUsername
	}
	if s.cfg.GroupsClaim != "" {
		var all map[string]json.RawMessage
		if err := idt.Claims(&all); err != nil {
			return Claims{}, errors.New("the ID token's claims cannot be read")
		}
		if g, ok := all[s.cfg.GroupsClaim]; ok {
			var list []string
			if err := json.Unmarshal(g, &list); err != nil {
				var one string
				if err := json.Unmarshal(g, &one); err != nil {
					return Claims{}, fmt.Errorf("the ID token's %s claim is not a list of group names", s.cfg.GroupsClaim)
				}
				list = []string{one}
			}
			out.Groups = list
		}
	}
	return out, nil
}
