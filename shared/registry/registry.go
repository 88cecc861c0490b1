// Package registry imports MCP registries into the catalog (docs/REGISTRY.md): the
// official registry at registry.modelcontextprotocol.io, or any registry that speaks its
// v0.1 API (GET /v0.1/servers?cursor=&limit=, server.json schema 2025-12-11), or a file of
// the same documents.
//
// Each remote (streamable-http or sse) of each server's latest version becomes one catalog
// entry, upserted on (server name, remote index) so that importing twice changes nothing
// and a version bump updates the entry in place. The registry's status is kept: deprecated
// entries are flagged, deleted ones hidden from the marketplace (never removed from the
// workspaces that installed them). URL {variables} become install-time fields and declared
// headers the entry's declared headers. Imported entries are unverified until a superuser
// promotes them. A document that is oversized, malformed or unsafe (a URL the guard
// refuses: javascript:, private addresses, http) is refused alone, with its reason in the
// report; it never aborts the import.
package registry

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/agentpack/gateway/shared/derrors"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/agentpack/gateway/shared/apperr"
	"github.com/agentpack/gateway/shared/auth"
	"github.com/agentpack/gateway/shared/catalog"
	"github.com/agentpack/gateway/shared/catalogentries"
	"github.com/agentpack/gateway/shared/db"
	"github.com/agentpack/gateway/shared/headers"
	"github.com/agentpack/gateway/shared/text"
	"github.com/agentpack/gateway/shared/urlguard"
)

// Limits of an import.
const (
	// MaxDocumentBytes bounds one server document (the official registry's are a few KiB).
	MaxDocumentBytes = 64 << 10
	// MaxPageBytes bounds one page of the list API, MaxFileBytes a file.
	MaxPageBytes = 16 << 20
	MaxFileBytes = 32 << 20
	// MaxPages bounds the pages followed (a loop guard besides the repeated-cursor check).
	MaxPages = 1000
	// PageSize is the limit asked of the list API.
	PageSize = 100
)

// Importer imports registries. Pool is required; HTTPClient fetches the registry (the
// deployment's guarded client: no redirects, dial-time address checks); URLGuard checks
// every remote URL (nil: strict — https only, public addresses only).
type Importer struct {
	Pool       *db.Pool
	HTTPClient *http.Client
	URLGuard   *urlguard.Guard
	Logger     *slog.Logger
}

// Report is what an import did, document by document.
type Report struct {
	Source    string    `json:"source"`
	Documents int       `json:"documents"`
	Created   int       `json:"created"`
	Updated   int       `json:"updated"`
	Unchanged int       `json:"unchanged"`
	Entries   []Outcome `json:"entries"`
	Skipped   []Problem `json:"skipped"`
	Refused   []Problem `json:"refused"`
}

// Outcome is one remote written as a catalog entry.
type Outcome struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	Remote  int    `json:"remote"`
	Entry   string `json:"entry"`
	Status  string `json:"status"`
	Outcome string `json:"outcome"`
}

// Problem is a document (Index: its position in the import, 0-based) or one remote of it
// that was skipped (nothing to import: packages only, not the latest version) or refused.
type Problem struct {
	Index   int    `json:"index"`
	Name    string `json:"name,omitempty"`
	Version string `json:"version,omitempty"`
	Remote  *int   `json:"remote,omitempty"`
	Reason  string `json:"reason"`
}

// FromURL imports every server the registry at base lists (GET base/v0.1/servers, cursor
// pagination). Only superusers import (the catalog is shared by every workspace). A
// registry that cannot be read fails the import with UPSTREAM_UNAVAILABLE or
// UPSTREAM_ERROR before anything is written.
func (im *Importer) FromURL(ctx context.Context, p *auth.Principal, base string) (_ *Report, err error) {
	defer derrors.Wrap(&err, "registry.Importer.FromURL(%q)", base)
	if err := catalogentries.RequireWriter(p); err != nil {
		return nil, err
	}
	base = strings.TrimRight(strings.TrimSpace(base), "/")
	if u, err := url.Parse(base); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil {
		return nil, apperr.New(apperr.Validation, "url must be the registry's http(s) base URL, such as https://registry.modelcontextprotocol.io").
			WithDetails(map[string]string{"field": "url"})
	}
	docs, err := im.fetch(ctx, base)
	if err != nil {
		return nil, err
	}
	return im.importDocs(ctx, p, base, docs)
}

// FromFile imports the documents of a file: a v0.1 list answer ({"servers": [...]}), an
// array of its items ({"server": …, "_meta": …}) or of bare server.json documents, or one
// server.json document. source names it in the entries (e.g. "file:servers.json").
func (im *Importer) FromFile(ctx context.Context, p *auth.Principal, source string, raw []byte) (_ *Report, err error) {
	defer derrors.Wrap(&err, "registry.Importer.FromFile(%q)", source)
	if err := catalogentries.RequireWriter(p); err != nil {
		return nil, err
	}
	if len(raw) > MaxFileBytes {
		return nil, apperr.New(apperr.PayloadTooLarge, "the file is %d bytes, at most %d", len(raw), MaxFileBytes)
	}
	docs, err := splitFile(raw)
	if err != nil {
		return nil, err
	}
	return im.importDocs(ctx, p, source, docs)
}

// splitFile returns the documents of a file (see FromFile).
func splitFile(raw []byte) ([]json.RawMessage, error) {
	raw = bytes.TrimSpace(raw)
	bad := apperr.New(apperr.Validation, "the file must hold a registry list answer, an array of server documents, or one server.json")
	switch {
	case len(raw) > 0 && raw[0] == '[':
		var docs []json.RawMessage
		if json.Unmarshal(raw, &docs) != nil {
			return nil, bad
		}
		return docs, nil
	case len(raw) > 0 && raw[0] == '{':
		var list struct {
			Servers []json.RawMessage `json:"servers"`
		}
		if json.Unmarshal(raw, &list) != nil {
			return nil, bad
		}
		if list.Servers != nil {
			return list.Servers, nil
		}
		return []json.RawMessage{raw}, nil
	}
	return nil, bad
}

// fetch follows the list API's cursors and returns every document.
func (im *Importer) fetch(ctx context.Context, base string) ([]json.RawMessage, error) {
	client := im.HTTPClient
	if client == nil {
		client = urlguard.New(nil).HTTPClient(30 * time.Second)
	}
	var docs []json.RawMessage
	seen := map[string]bool{}
	cursor := ""
	for page := 0; ; page++ {
		if page >= MaxPages {
			return nil, apperr.New(apperr.UpstreamError, "the registry listed more than %d pages", MaxPages)
		}
		q := url.Values{"limit": {fmt.Sprint(PageSize)}}
		if cursor != "" {
			q.Set("cursor", cursor)
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/v0.1/servers?"+q.Encode(), nil)
		if err != nil {
			return nil, apperr.Wrap(err, apperr.Validation, "url is not a valid registry URL")
		}
		req.Header.Set("Accept", "application/json")
		resp, err := client.Do(req)
		if err != nil {
			return nil, apperr.Wrap(err, apperr.UpstreamUnavailable, "the registry could not be reached")
		}
		body, err := io.ReadAll(io.LimitReader(resp.Body, MaxPageBytes+1))
		resp.Body.Close()
		switch {
		case err != nil:
			return nil, apperr.Wrap(err, apperr.UpstreamUnavailable, "the registry's answer could not be read")
		case resp.StatusCode != http.StatusOK:
			return nil, apperr.New(apperr.UpstreamError, "the registry answered HTTP %d to GET /v0.1/servers", resp.StatusCode)
		case len(body) > MaxPageBytes:
			return nil, apperr.New(apperr.UpstreamError, "a page of the registry's list is over %d bytes", MaxPageBytes)
		}
		var list struct {
			Servers  []json.RawMessage `json:"servers"`
			Metadata struct {
				NextCursor string `json:"nextCursor"`
			} `json:"metadata"`
		}
		if err := json.Unmarshal(body, &list); err != nil {
			return nil, apperr.Wrap(err, apperr.UpstreamError, "the registry's answer is not a v0.1 server list")
		}
		docs = append(docs, list.Servers...)
		cursor = list.Metadata.NextCursor
		if cursor == "" {
			return docs, nil
		}
		if seen[cursor] {
			return nil, apperr.New(apperr.UpstreamError, "the registry repeated a cursor")
		}
		seen[cursor] = true
	}
}

// document is one list item: the server and the registry's metadata. A bare server.json
// decodes with Server empty and is read as the server itself (status active).
type document struct {
	Server *server `json:"server"`
	Meta   struct {
		Official *struct {
			Status      string     `json:"status"`
			PublishedAt *time.Time `json:"publishedAt"`
			IsLatest    *bool      `json:"isLatest"`
		} `json:"io.modelcontextprotocol.registry/official"`
	} `json:"_meta"`
}

// server is the part of server.json (schema 2025-12-11) the catalog uses.
type server struct {
	Name        string   `json:"name"`
	Title       string   `json:"title"`
	Description string   `json:"description"`
	Version     string   `json:"version"`
	WebsiteURL  string   `json:"websiteUrl"`
	Remotes     []remote `json:"remotes"`
	Packages    []any    `json:"packages"`
	// VersionDetail is the pre-2025-09-29 shape of version ({"version": …}), still found
	// in published documents; read only to say why such a document is refused.
	VersionDetail any `json:"version_detail"`
}

type remote struct {
	Type      string              `json:"type"`
	URL       string              `json:"url"`
	Headers   []header            `json:"headers"`
	Variables map[string]variable `json:"variables"`
}

type header struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	IsRequired  bool   `json:"isRequired"`
	IsSecret    bool   `json:"isSecret"`
	Value       string `json:"value"`
}

type variable struct {
	Description string   `json:"description"`
	IsRequired  bool     `json:"isRequired"`
	Default     string   `json:"default"`
	Choices     []string `json:"choices"`
	Format      string   `json:"format"`
	IsSecret    bool     `json:"isSecret"`
}

// Rules of server.json 2025-12-11 the import checks (the schema's patterns and limits).
var (
	serverName   = regexp.MustCompile(`^[a-zA-Z0-9.-]+/[a-zA-Z0-9._-]+$`)
	variableName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]{0,63}$`)
	templateRef  = regexp.MustCompile(`\{([^{}]*)\}`)
)

// parsed is one document that passed the checks.
type parsed struct {
	index       int
	srv         *server
	status      string
	publishedAt *time.Time
	latest      bool
}

// parse checks one document; the error is the reason it is refused.
func parse(i int, raw json.RawMessage) (*parsed, error) {
	if len(raw) > MaxDocumentBytes {
		return nil, refuse("the document is %d bytes, at most %d", len(raw), MaxDocumentBytes)
	}
	var d document
	if err := json.Unmarshal(raw, &d); err != nil {
		return nil, malformed(err)
	}
	p := &parsed{index: i, srv: d.Server, status: "active", latest: true}
	if p.srv == nil { // a bare server.json
		var s server
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, malformed(err)
		}
		p.srv = &s
	}
	if o := d.Meta.Official; o != nil {
		if o.Status != "" {
			p.status = o.Status
		}
		p.publishedAt = o.PublishedAt
		if o.IsLatest != nil {
			p.latest = *o.IsLatest
		}
	}
	s := p.srv
	switch {
	case !serverName.MatchString(s.Name) || len(s.Name) > 200:
		return nil, refuse("name %q is not a registry server name (namespace/name, at most 200 characters)", text.Clip(s.Name, 80))
	case s.Version == "" && s.VersionDetail != nil:
		return nil, refuse("no version: the document uses the version_detail member of the schema before 2025-09-29 (server.json 2025-12-11 has version)")
	case s.Version == "" || len(s.Version) > 100:
		return nil, refuse("version must be 1 to 100 characters")
	case p.status != "active" && p.status != "deprecated" && p.status != "deleted":
		return nil, refuse("status %q is not active, deprecated or deleted", text.Clip(p.status, 40))
	}
	return p, nil
}

// entry turns remote r (index ri) of p into the catalog entry it becomes, or the reason it
// is refused.
func (im *Importer) entry(source string, p *parsed, ri int) (*db.CatalogRegistryEntry, error) {
	r := p.srv.Remotes[ri]
	transport := r.Type
	if transport != "streamable-http" && transport != "sse" {
		return nil, refuse("remote type %q is not streamable-http or sse", text.Clip(transport, 40))
	}
	// Every {name} of the URL must be a declared variable, and every variable used.
	var vars []db.URLVariable
	used := map[string]bool{}
	for _, m := range templateRef.FindAllStringSubmatch(r.URL, -1) {
		name := m[1]
		v, ok := r.Variables[name]
		if !variableName.MatchString(name) || !ok {
			return nil, refuse("the URL's template {%s} is not a declared variable", text.Clip(name, 64))
		}
		if used[name] {
			continue
		}
		used[name] = true
		if len(v.Description) > 500 || len(v.Choices) > 100 || len(v.Default) > 200 {
			return nil, refuse("variable %s is too large", name)
		}
		for _, c := range append([]string{v.Default}, v.Choices...) {
			if c != "" && !catalog.ValidURLValue(c) {
				return nil, refuse("variable %s has a default or choice that is not a plain URL value", name)
			}
		}
		vars = append(vars, db.URLVariable{Name: name, Description: v.Description, IsRequired: v.IsRequired || v.Default == "",
			Default: v.Default, Choices: v.Choices})
	}
	if len(used) != len(r.Variables) {
		return nil, refuse("the remote declares variables its URL does not use")
	}
	// The URL as it will be once filled in: checked with a sample value per variable.
	sample := templateRef.ReplaceAllString(r.URL, "x")
	guard := im.URLGuard
	if guard == nil {
		guard = urlguard.New(&urlguard.Options{RequireHTTPS: true})
	}
	if err := guard.CheckURL(sample); err != nil {
		return nil, refuse("remote URL refused: %s", apperr.Public(err).Message)
	}
	if err := headers.CheckURLNotRedacted(sample); err != nil {
		return nil, refuse("remote URL refused: %s", apperr.Public(err).Message)
	}
	if len(r.Headers) > 20 {
		return nil, refuse("the remote declares %d headers, at most 20", len(r.Headers))
	}
	tmpl := map[string]string{}
	var decl []db.DeclaredHeader
	for _, h := range r.Headers {
		if len(h.Description) > 500 {
			return nil, refuse("header %s: description over 500 bytes", text.Clip(h.Name, 64))
		}
		tmpl[h.Name] = "{{" + h.Name + "}}"
		decl = append(decl, db.DeclaredHeader{Name: h.Name, Description: h.Description, IsSecret: h.IsSecret, IsRequired: h.IsRequired})
	}
	if err := headers.Validate(tmpl); err != nil {
		return nil, refuse("declared headers refused: %s", apperr.Public(err).Message)
	}
	name := p.srv.Name
	if len(p.srv.Remotes) > 1 {
		// "name (type)", or "name (type N)" (N: the remote's 1-based position) when an
		// earlier remote has the same type: com.aliyun/cloudmonitor lists
		// streamable-http, sse, streamable-http, sse.
		name = fmt.Sprintf("%s (%s)", name, transport)
		if slices.ContainsFunc(p.srv.Remotes[:ri], func(o remote) bool { return o.Type == transport }) {
			name = fmt.Sprintf("%s (%s %d)", p.srv.Name, transport, ri+1)
		}
	}
	if len(name) > 100 {
		name = name[:90] + fmt.Sprintf("… #%d", ri)
	}
	desc := p.srv.Description
	if p.srv.Title != "" {
		desc = p.srv.Title + ": " + desc
	}
	author, _, _ := strings.Cut(p.srv.Name, "/")
	return &db.CatalogRegistryEntry{Name: name, URL: r.URL, TransportType: transport, Headers: tmpl,
		Description: text.Clip(desc, 2000), Version: p.srv.Version, Author: text.Clip(author, 200),
		RegistryURL: source, RegistryName: p.srv.Name, RegistryRemote: ri, RegistryStatus: p.status,
		PublishedAt: p.publishedAt, URLVariables: vars, DeclaredHeaders: decl}, nil
}

// importDocs checks every document and upserts the remotes of each server's latest version,
// one transaction per entry (a refused one never undoes another).
func (im *Importer) importDocs(ctx context.Context, p *auth.Principal, source string, docs []json.RawMessage) (*Report, error) {
	rep := &Report{Source: source, Documents: len(docs), Entries: []Outcome{}, Skipped: []Problem{}, Refused: []Problem{}}
	latest := map[string]*parsed{}
	var order []string
	for i, raw := range docs {
		d, err := parse(i, raw)
		if err != nil {
			rep.Refused = append(rep.Refused, Problem{Index: i, Name: peekName(raw), Reason: err.Error()})
			continue
		}
		prev, ok := latest[d.srv.Name]
		switch {
		case !ok:
			latest[d.srv.Name] = d
			order = append(order, d.srv.Name)
		case d.latest && !prev.latest, d.latest == prev.latest && later(d.publishedAt, prev.publishedAt):
			rep.Skipped = append(rep.Skipped, Problem{Index: prev.index, Name: prev.srv.Name, Version: prev.srv.Version, Reason: "not the latest version"})
			latest[d.srv.Name] = d
		default:
			rep.Skipped = append(rep.Skipped, Problem{Index: i, Name: d.srv.Name, Version: d.srv.Version, Reason: "not the latest version"})
		}
	}
	for _, name := range order {
		d := latest[name]
		if len(d.srv.Remotes) == 0 {
			reason := "no remotes: the server is distributed as packages only, which the gateway cannot run"
			if len(d.srv.Packages) == 0 {
				reason = "no remotes and no packages: nothing the gateway can connect to"
			}
			rep.Skipped = append(rep.Skipped, Problem{Index: d.index, Name: name, Version: d.srv.Version, Reason: reason})
			continue
		}
		for ri := range d.srv.Remotes {
			r := ri
			e, err := im.entry(source, d, ri)
			var out Outcome
			if err == nil {
				err = db.InTx(ctx, im.Pool, func(tx db.Tx) error {
					outcome, err := db.CatalogEntryUpsertRegistry(ctx, tx, e)
					if err != nil || outcome == db.RegistryUnchanged {
						out.Outcome = outcome
						return err
					}
					row, err := db.CatalogEntryGetByName(ctx, tx, e.Name)
					if err != nil {
						return err
					}
					out = Outcome{Name: name, Version: d.srv.Version, Remote: ri, Entry: row.ID, Status: d.status, Outcome: outcome}
					return db.EventInsert(ctx, tx, &db.Event{EntityType: catalogentries.EntityType, EntityID: row.ID,
						Action: "catalog_entry.imported", Actor: p.Subject, Payload: map[string]any{"registry": source,
							"registryName": name, "version": d.srv.Version, "status": d.status, "outcome": outcome}})
				})
			}
			var ref *refusal
			switch {
			case err == nil && out.Outcome == db.RegistryUnchanged:
				rep.Unchanged++
			case err == nil:
				rep.Entries = append(rep.Entries, out)
				if out.Outcome == db.RegistryCreated {
					rep.Created++
				} else {
					rep.Updated++
				}
			case errors.As(err, &ref):
				rep.Refused = append(rep.Refused, Problem{Index: d.index, Name: name, Version: d.srv.Version, Remote: &r, Reason: ref.msg})
			case apperr.CodeOf(err) == apperr.Conflict:
				rep.Refused = append(rep.Refused, Problem{Index: d.index, Name: name, Version: d.srv.Version, Remote: &r,
					Reason: fmt.Sprintf("another catalog entry is already called %q", e.Name)})
			default:
				return nil, fmt.Errorf("registry: import %s from %s: %w", name, source, err)
			}
		}
	}
	if im.Logger != nil {
		im.Logger.InfoContext(ctx, "registry imported", "source", source, "documents", rep.Documents, "created", rep.Created,
			"updated", rep.Updated, "unchanged", rep.Unchanged, "refused", len(rep.Refused))
	}
	return rep, nil
}

// malformed is the refusal of a document that does not decode: the member and the JSON
// type found when a member has the wrong type (never Go type names), else the decoder's
// message.
func malformed(err error) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		want := "of another type"
		switch te.Type.Kind() {
		case reflect.String:
			want = "a string"
		case reflect.Slice:
			want = "an array"
		case reflect.Struct, reflect.Map, reflect.Pointer:
			want = "an object"
		case reflect.Bool:
			want = "a boolean"
		}
		field := strings.TrimPrefix(strings.TrimPrefix(te.Field, "server."), "_meta.")
		return refuse("malformed document: member %s is a JSON %s, it must be %s", text.Clip(field, 100), te.Value, want)
	}
	return refuse("malformed document: %s", text.Clip(err.Error(), 200))
}

// refusal is the reason one document or remote is refused (the report shows it).
type refusal struct{ msg string }

func (r *refusal) Error() string { return r.msg }

func refuse(format string, args ...any) error { return &refusal{msg: fmt.Sprintf(format, args...)} }

func later(a, b *time.Time) bool { return a != nil && (b == nil || a.After(*b)) }

// peekName is a refused document's server name when one can be read (for the report).
func peekName(raw json.RawMessage) string {
	if len(raw) > MaxDocumentBytes {
		return ""
	}
	var d struct {
		Name   any `json:"name"`
		Server struct {
			Name any `json:"name"`
		} `json:"server"`
	}
	_ = json.Unmarshal(raw, &d)
	for _, n := range []any{d.Server.Name, d.Name} {
		if s, ok := n.(string); ok {
			return text.Clip(s, 200)
		}
	}
	return ""
}
