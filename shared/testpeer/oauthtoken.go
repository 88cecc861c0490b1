package testpeer

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// OAuthUpstream's token endpoint (POST /token): the authorization code grant with PKCE
// S256, client_credentials and refresh_token with rotation, each checked as a strict
// authorization server checks it (client authentication, redirect URI, resource).

func (u *OAuthUpstream) token(w http.ResponseWriter, r *http.Request) {
	_ = r.ParseForm()
	f := r.PostForm
	id, secret, basic := r.BasicAuth()
	if !basic {
		id, secret = f.Get("client_id"), f.Get("client_secret")
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	all := url.Values{}
	for k, vs := range r.PostForm {
		all[k] = append(all[k], vs...)
	}
	for k, vs := range r.URL.Query() {
		all[k] = append(all[k], vs...)
	}
	u.tokenForms = append(u.tokenForms, all)
	if u.tokenError != nil {
		body := map[string]any{}
		for k := range u.tokenError {
			body[k] = u.tokenError.Get(k)
		}
		writeOAuthJSON(w, 400, body)
		return
	}
	if len(all["resource"]) > 1 {
		writeOAuthJSON(w, 400, map[string]any{"error": "invalid_target", "error_description": "more than one resource"})
		return
	}
	if want, ok := u.clients[id]; !ok || want != secret {
		writeOAuthJSON(w, 401, map[string]any{"error": "invalid_client"})
		return
	}
	var info tokenInfo
	switch f.Get("grant_type") {
	case "authorization_code":
		c, ok := u.codes[f.Get("code")]
		delete(u.codes, f.Get("code"))
		sum := sha256.Sum256([]byte(f.Get("code_verifier")))
		switch {
		case !ok || c.client != id || c.redirect != f.Get("redirect_uri"):
			writeOAuthJSON(w, 400, map[string]any{"error": "invalid_grant"})
			return
		case base64.RawURLEncoding.EncodeToString(sum[:]) != c.challenge:
			writeOAuthJSON(w, 400, map[string]any{"error": "invalid_grant", "error_description": "PKCE"})
			return
		case f.Get("resource") != c.resource:
			writeOAuthJSON(w, 400, map[string]any{"error": "invalid_target"})
			return
		}
		info = tokenInfo{client: id, subject: c.subject, resource: c.resource, scope: c.scope}
	case "client_credentials":
		info = tokenInfo{client: id, subject: "client:" + id, resource: f.Get("resource"), scope: f.Get("scope")}
	case "refresh_token":
		old, ok := u.refresh[f.Get("refresh_token")]
		if !ok || u.refuseRefresh || old.client != id {
			writeOAuthJSON(w, 400, map[string]any{"error": "invalid_grant"})
			return
		}
		if f.Get("resource") != old.resource {
			writeOAuthJSON(w, 400, map[string]any{"error": "invalid_target"})
			return
		}
		delete(u.refresh, f.Get("refresh_token")) // rotation
		u.refreshes++
		info = old
	default:
		writeOAuthJSON(w, 400, map[string]any{"error": "unsupported_grant_type"})
		return
	}
	access, refresh := "at-"+rand.Text(), "rt-"+rand.Text()
	info.expires = time.Now().Add(u.ttl)
	u.access[access] = info
	u.refresh[refresh] = info
	scope := info.scope
	if u.commaScope {
		scope = strings.Join(strings.Fields(scope), ",")
	}
	writeOAuthJSON(w, 200, map[string]any{"access_token": access, "refresh_token": refresh, "token_type": "Bearer",
		"expires_in": int(u.ttl / time.Second), "scope": scope})
}

func writeOAuthJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
