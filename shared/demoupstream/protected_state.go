package demoupstream

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/oauth2-proxy/mockoidc"
)

// asState is what a ProtectedOptions.StateFile holds: the authorization server's signing
// key (PKCS #1 DER), its client secret and its sessions (the demo user of each grant), so
// that tokens issued before a restart still verify and refresh after it.
type asState struct {
	Key          []byte         `json:"key"`
	ClientSecret string         `json:"clientSecret"`
	Sessions     []savedSession `json:"sessions"`
}

type savedSession struct {
	ID      string             `json:"id"`
	Scopes  []string           `json:"scopes"`
	Nonce   string             `json:"nonce,omitempty"`
	User    *mockoidc.MockUser `json:"user"`
	Granted bool               `json:"granted"`
}

// newAuthorizationServer is mockoidc's server with the key, secret and sessions of file
// (when it exists), else a fresh 2048-bit key — never mockoidc's built-in default key,
// which is public — written to file when one is named.
func newAuthorizationServer(file string) (*mockoidc.MockOIDC, error) {
	var st asState
	if file != "" {
		raw, err := os.ReadFile(file)
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			return nil, err
		default:
			if err := json.Unmarshal(raw, &st); err != nil {
				return nil, fmt.Errorf("%s: %w (delete it to start afresh)", file, err)
			}
		}
	}
	var key *rsa.PrivateKey
	var err error
	if len(st.Key) > 0 {
		if key, err = x509.ParsePKCS1PrivateKey(st.Key); err != nil {
			return nil, fmt.Errorf("%s: signing key: %w (delete it to start afresh)", file, err)
		}
	} else if key, err = rsa.GenerateKey(rand.Reader, 2048); err != nil {
		return nil, err
	}
	as, err := mockoidc.NewServer(key)
	if err != nil {
		return nil, err
	}
	if st.ClientSecret != "" {
		as.ClientSecret = st.ClientSecret
	}
	for _, s := range st.Sessions {
		if s.ID == "" || s.User == nil {
			continue
		}
		as.SessionStore.Store[s.ID] = &mockoidc.Session{SessionID: s.ID, Scopes: s.Scopes, OIDCNonce: s.Nonce,
			User: s.User, Granted: s.Granted}
	}
	if file != "" && len(st.Key) == 0 {
		if err := saveAuthorizationServer(file, as); err != nil {
			return nil, err
		}
	}
	return as, nil
}

// saveAuthorizationServer writes as's key, client secret and granted sessions to file
// (0600, replaced atomically). The caller holds the AS's lock.
func saveAuthorizationServer(file string, as *mockoidc.MockOIDC) error {
	st := asState{Key: x509.MarshalPKCS1PrivateKey(as.Keypair.PrivateKey), ClientSecret: as.ClientSecret}
	for id, s := range as.SessionStore.Store {
		u, ok := s.User.(*mockoidc.MockUser)
		if !ok || !s.Granted {
			continue // only the demo users' granted sessions carry tokens worth keeping
		}
		st.Sessions = append(st.Sessions, savedSession{ID: id, Scopes: s.Scopes, Nonce: s.OIDCNonce, User: u, Granted: true})
	}
	raw, err := json.Marshal(st)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
		return err
	}
	tmp := file + ".tmp"
	if err := os.WriteFile(tmp, raw, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, file)
}
