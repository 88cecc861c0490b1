package authserver

import (
	"context"
	"html/template"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/agentpack/gateway/shared/db"
)

type pageData struct {
	Title      string
	Message    string
	Person     Person
	Client     string
	ClientID   string
	LogoURI    string
	Redirect   string
	Document   bool
	Scopes     []string
	Workspaces []workspaceOption
	Hidden     []hiddenField
	Action     string
	// FirstParty: the console's workspace chooser, not a consent.
	FirstParty bool
	// FormTarget is the CSP source of the client's redirect URI (its origin, or its
	// custom scheme), "" when the page has no consent form.
	FormTarget string
}

type workspaceOption struct {
	ID, Name, Role string
	Selected       bool
}

type hiddenField struct{ Name, Value string }

func (s *Server) consentPage(ctx context.Context, w http.ResponseWriter, r *http.Request, p Person, c *client,
	ms []Membership, ws string, scopes []string) {
	d := pageData{Title: "Allow access", Person: p, Client: c.Name, ClientID: c.GetID(), LogoURI: c.LogoURI,
		Document: c.Document, Scopes: scopes, Action: AuthorizePath, FirstParty: c.firstParty}
	if c.firstParty {
		d.Title = "Choose a workspace"
	}
	if d.Client == "" {
		d.Client = "An unnamed client"
	}
	if u, err := url.Parse(r.Form.Get("redirect_uri")); err == nil {
		d.Redirect = u.Scheme + "://" + u.Host
		d.FormTarget = cspSource(u)
	}
	for _, m := range ms {
		name := m.WorkspaceID
		if w, err := db.WorkspaceGet(ctx, s.o.Pool, m.WorkspaceID); err == nil && w.Name != "" {
			name = w.Name
		}
		d.Workspaces = append(d.Workspaces, workspaceOption{ID: m.WorkspaceID, Name: name, Role: m.Role,
			Selected: m.WorkspaceID == ws})
	}
	for k, vs := range r.Form {
		switch k {
		case "decision", "workspace", "audience":
			continue
		}
		for _, v := range vs {
			d.Hidden = append(d.Hidden, hiddenField{k, v})
		}
	}
	slices.SortFunc(d.Hidden, func(a, b hiddenField) int { return strings.Compare(a.Name, b.Name) })
	s.page(w, http.StatusOK, d)
}

func (s *Server) page(w http.ResponseWriter, status int, d pageData) {
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	// form-action also governs the redirects that follow the form's submission (CSP 3
	// §6.4.1; Chromium enforces it): the decision answers 303 to the client's redirect URI,
	// so that URI's origin (or custom scheme) is allowed beside 'self'.
	formAction := "'self'"
	if d.FormTarget != "" {
		formAction += " " + d.FormTarget
	}
	h.Set("Content-Security-Policy", "default-src 'none'; img-src https:; style-src 'unsafe-inline'; form-action "+formAction+"; frame-ancestors 'none'; base-uri 'none'")
	h.Set("X-Frame-Options", "DENY")
	// same-origin, not no-referrer: under no-referrer a browser sends "Origin: null" with
	// the form's POST (Fetch §3.2.5), which the decision's cross-origin check must refuse.
	// Nothing leaves for another origin either way.
	h.Set("Referrer-Policy", "same-origin")
	w.WriteHeader(status)
	_ = pageTmpl.Execute(w, d)
}

// cspSource is u as a CSP source expression (CSP 3 §2.3.1): "scheme://host[:port]" for
// http and https, "scheme:" for a custom scheme (cursor:, vscode:). It returns "" for
// anything with a character a source expression cannot hold, so that a redirect URI can
// never add a directive to the policy. The URI was already matched against the client's
// registered redirect URIs (RFC 6749 §3.1.2.3) before the page is shown.
func cspSource(u *url.URL) string {
	ok := func(s, extra string) bool {
		return s != "" && strings.IndexFunc(s, func(r rune) bool {
			return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune(extra, r))
		}) < 0
	}
	if !ok(u.Scheme, "+-.") {
		return ""
	}
	switch strings.ToLower(u.Scheme) {
	case "http", "https":
		if !ok(u.Host, ".-:[]") {
			return ""
		}
		return strings.ToLower(u.Scheme) + "://" + u.Host
	}
	return strings.ToLower(u.Scheme) + ":"
}

var pageTmpl = template.Must(template.New("consent").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
<title>{{.Title}} · Agentpack MCP Gateway</title>
<style>body{font:16px system-ui,sans-serif;max-width:34rem;margin:3rem auto;padding:0 1rem;color:#1b1f24}
.card{border:1px solid #d0d7de;border-radius:8px;padding:1.5rem}img{width:48px;height:48px;float:right}
button{font:inherit;padding:.5rem 1.2rem;margin-right:.5rem;border-radius:6px;border:1px solid #8c959f;cursor:pointer}
button[value=allow]{background:#1f6feb;color:#fff;border-color:#1f6feb}.muted{color:#57606a;font-size:.9rem}
code{font-size:.85rem;word-break:break-all}</style></head>
<body><main class="card">
{{if .FirstParty}}
<h1 id="consent-title">Open the console in which workspace?</h1>
<p>Signed in as <strong>{{if .Person.Email}}{{.Person.Email}}{{else}}{{.Person.Name}}{{end}}</strong>. You are a member of several workspaces; the console works in one at a time (sign in again to switch).</p>
<form method="post" action="{{.Action}}">
{{range .Hidden}}<input type="hidden" name="{{.Name}}" value="{{.Value}}">{{end}}
<p><label>Workspace
<select name="workspace" id="workspace">{{range .Workspaces}}<option value="{{.ID}}"{{if .Selected}} selected{{end}}>{{.Name}} ({{.Role}})</option>{{end}}</select></label></p>
<p><button type="submit" name="decision" value="allow" id="allow">Continue</button></p>
</form>
{{else if .ClientID}}
<h1 id="consent-title">{{if .LogoURI}}<img src="{{.LogoURI}}" alt="">{{end}}Allow <span id="client-name">{{.Client}}</span> to use the gateway as you?</h1>
<p>Signed in as <strong>{{if .Person.Email}}{{.Person.Email}}{{else}}{{.Person.Name}}{{end}}</strong>.</p>
<p><span id="client-name-2">{{.Client}}</span> will be sent back to <strong id="redirect-host">{{.Redirect}}</strong>
and may call this gateway's MCP tools in the workspace below with your role there, until you revoke it
(Console → Connected clients).</p>
<p class="muted">Client id: <code>{{.ClientID}}</code>{{if .Document}} (its metadata document){{end}}</p>
<form method="post" action="{{.Action}}">
{{range .Hidden}}<input type="hidden" name="{{.Name}}" value="{{.Value}}">{{end}}
<p><label>Workspace
<select name="workspace" id="workspace">{{range .Workspaces}}<option value="{{.ID}}"{{if .Selected}} selected{{end}}>{{.Name}} ({{.Role}})</option>{{end}}</select></label></p>
<p>Scopes: {{range .Scopes}}<code>{{.}}</code> (use the MCP endpoint) {{end}}</p>
<p><button type="submit" name="decision" value="allow" id="allow">Allow</button>
<button type="submit" name="decision" value="deny" id="deny">Deny</button></p>
</form>
{{else}}
<h1>{{.Title}}</h1><p id="message">{{.Message}}</p>
{{end}}
</main></body></html>
`))
