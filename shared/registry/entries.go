package registry

// From checked documents to catalog entries: each remote of a server's latest version
// becomes one entry, upserted on (server name, remote index), one transaction per entry.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/agentpack/gateway/shared/apperr"
	"github.com/agentpack/gateway/shared/auth"
	"github.com/agentpack/gateway/shared/catalog"
	"github.com/agentpack/gateway/shared/catalogentries"
	"github.com/agentpack/gateway/shared/db"
	"github.com/agentpack/gateway/shared/headers"
	"github.com/agentpack/gateway/shared/text"
	"github.com/agentpack/gateway/shared/urlguard"
)

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
