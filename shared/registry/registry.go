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
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/agentpack/gateway/shared/apperr"
	"github.com/agentpack/gateway/shared/auth"
	"github.com/agentpack/gateway/shared/catalogentries"
	"github.com/agentpack/gateway/shared/db"
	"github.com/agentpack/gateway/shared/derrors"
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
