// Package catalogentries is the service of the shared marketplace catalog
// (mcp_catalog_entries): reads as catalog.EntryView (the gateway's built-in tools and its
// agentpack://catalog resource), and create, update and delete of an entry, each with its
// event_log row in one transaction. Only superusers write it: the catalog is shared by every
// workspace, so an admin of workspace A who could repoint an entry's URL would have
// workspace B's next install send B's header secrets there (docs/DESIGN.md §8 says writes
// need admin "or superuser"; for this one cross-tenant object the stricter role applies).
//
// It is a package of its own, not part of shared/catalog, because shared/catalog builds
// the per-workspace snapshot document the gateway serves from (read side, hot path),
// while this is the marketplace's administrative write side of a different table.
// Request validation (URL guard, header schema) stays with the REST handler, which owns
// the request body; the rules here are authorization, uniqueness and the install check.
package catalogentries

import (
	"cmp"
	"context"
	"log/slog"

	"github.com/agentpack/gateway/shared/apperr"
	"github.com/agentpack/gateway/shared/auth"
	"github.com/agentpack/gateway/shared/catalog"
	"github.com/agentpack/gateway/shared/db"
	"github.com/agentpack/gateway/shared/derrors"
	"github.com/agentpack/gateway/shared/headers"
)

// EntityType is the event_log entity type of catalog entry changes.
const EntityType = "mcp_catalog_entry"

// Event actions written to event_log for catalog entry changes.
const (
	ActionCreated = "mcp.catalog_entry_created"
	ActionUpdated = "mcp.catalog_entry_updated"
	ActionDeleted = "mcp.catalog_entry_deleted"
)

// Service reads and writes catalog entries.
type Service struct {
	Pool   *db.Pool
	Logger *slog.Logger // nil: discard
}

func (s *Service) log() *slog.Logger {
	if s.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return s.Logger
}

// RequireWriter returns FORBIDDEN unless p is a superuser (see the package comment).
func RequireWriter(p *auth.Principal) error {
	if !p.IsSuperuser() {
		return apperr.New(apperr.Forbidden, "editing the shared catalog requires the superuser role")
	}
	return nil
}

// Create inserts entry in (tier unverified; the caller has validated in, name and url
// set) and logs ActionCreated, in one transaction, returning the new entry.
// Errors: FORBIDDEN (not superuser), CONFLICT ("a catalog entry named … already
// exists"), UNAVAILABLE; each wrapped with "catalogentries: create".
func (s *Service) Create(ctx context.Context, p *auth.Principal, in *db.CatalogEntryInput) (_ *db.CatalogEntry, err error) {
	defer derrors.Wrap(&err, "catalogentries: create")
	if err := RequireWriter(p); err != nil {
		return nil, err
	}
	var e *db.CatalogEntry
	err = db.InTx(ctx, s.Pool, func(tx db.Tx) error {
		var err error
		if e, err = db.CatalogEntryCreate(ctx, tx, in); err != nil {
			return nameConflict(err, in.Name)
		}
		return logEvent(ctx, tx, p, ActionCreated, e)
	})
	if err != nil {
		return nil, err
	}
	s.log().InfoContext(ctx, "catalog entry created", "entry_id", e.ID)
	return e, nil
}

// Update applies in to entry id (nil fields unchanged; the caller has validated in) and
// logs ActionUpdated, in one transaction, returning the new entry. Existing installs keep
// the URL and transport they copied at install time.
// Errors: FORBIDDEN (not superuser), NOT_FOUND, CONFLICT (name taken), UNAVAILABLE; each
// wrapped with "catalogentries: update <id>".
func (s *Service) Update(ctx context.Context, p *auth.Principal, id string, in *db.CatalogEntryInput) (_ *db.CatalogEntry, err error) {
	defer derrors.Wrap(&err, "catalogentries: update %s", id)
	if err := RequireWriter(p); err != nil {
		return nil, err
	}
	var e *db.CatalogEntry
	err = db.InTx(ctx, s.Pool, func(tx db.Tx) error {
		var err error
		if e, err = db.CatalogEntryUpdateByID(ctx, tx, id, in); err != nil {
			return nameConflict(err, in.Name)
		}
		return logEvent(ctx, tx, p, ActionUpdated, e)
	})
	if err != nil {
		return nil, err
	}
	s.log().InfoContext(ctx, "catalog entry updated", "entry_id", e.ID)
	return e, nil
}

// Delete hard-deletes entry id and logs ActionDeleted, in one transaction holding the
// entry's lock (db.CatalogEntryLock), so that it serialises with installs. An entry that
// any workspace has installed is refused: an install without its entry could no longer
// be told apart or uninstalled by entry.
// Errors: FORBIDDEN (not superuser), NOT_FOUND, CONFLICT ("… is installed in N
// workspace(s)"), UNAVAILABLE; each wrapped with "catalogentries: delete <id>".
func (s *Service) Delete(ctx context.Context, p *auth.Principal, id string) (err error) {
	defer derrors.Wrap(&err, "catalogentries: delete %s", id)
	if err := RequireWriter(p); err != nil {
		return err
	}
	err = db.InTx(ctx, s.Pool, func(tx db.Tx) error {
		e, err := db.CatalogEntryGet(ctx, tx, id)
		if err != nil {
			return err
		}
		if err := db.CatalogEntryLock(ctx, tx, e.ID); err != nil {
			return err
		}
		n, err := db.CatalogEntryInstallCount(ctx, tx, e.ID)
		if err != nil {
			return err
		}
		if n > 0 {
			return apperr.New(apperr.Conflict, "%s is installed in %d workspace(s)", e.Name, n).
				WithHint("uninstall it everywhere first")
		}
		if _, err := db.CatalogEntryDelete(ctx, tx, e.ID); err != nil {
			return err
		}
		return logEvent(ctx, tx, p, ActionDeleted, e)
	})
	if err != nil {
		return err
	}
	s.log().InfoContext(ctx, "catalog entry deleted", "entry_id", id)
	return nil
}

// SetTier sets entry id's verification tier (a superuser promoting an imported entry,
// docs/REGISTRY.md) and logs ActionTierSet, in one transaction. The caller has checked
// tier. Errors: FORBIDDEN, NOT_FOUND, UNAVAILABLE; wrapped with "catalogentries: tier <id>".
func (s *Service) SetTier(ctx context.Context, p *auth.Principal, id, tier string) (_ *db.CatalogEntry, err error) {
	defer derrors.Wrap(&err, "catalogentries: tier %s", id)
	if err := RequireWriter(p); err != nil {
		return nil, err
	}
	var e *db.CatalogEntry
	err = db.InTx(ctx, s.Pool, func(tx db.Tx) error {
		var err error
		if e, err = db.CatalogEntryTierSet(ctx, tx, id, tier); err != nil {
			return err
		}
		return db.EventInsert(ctx, tx, &db.Event{EntityType: EntityType, EntityID: e.ID, Action: ActionTierSet,
			Actor: p.Subject, Payload: map[string]any{"name": e.Name, "verificationTier": tier}})
	})
	if err != nil {
		return nil, err
	}
	return e, nil
}

// ActionTierSet is the event of SetTier.
const ActionTierSet = "catalog_entry.tier_set"

// nameConflict gives a CONFLICT on the entry name its client message.
func nameConflict(err error, name *string) error {
	if apperr.CodeOf(err) == apperr.Conflict && name != nil {
		return apperr.Wrap(err, apperr.Conflict, "a catalog entry named %q already exists", *name)
	}
	return err
}

// logEvent writes the event_log row of a change to e; URL and header templates are
// redacted (an admin may have put a real secret in one).
func logEvent(ctx context.Context, q db.Querier, p *auth.Principal, action string, e *db.CatalogEntry) error {
	payload := map[string]any{"name": e.Name, "url": headers.RedactURL(e.URL), "transportType": e.TransportType,
		"headers": headers.Redact(e.Headers), "category": e.Category}
	return db.EventInsert(ctx, q, &db.Event{EntityType: EntityType, EntityID: e.ID, Action: action,
		Actor: p.Subject, Payload: payload})
}

// List returns the entries matching f, filtered and ordered as db.CatalogEntryList does,
// as views with the URL redacted: at most limit of them (limit ≤ 0: all), and how many
// matched in total. Errors: UNAVAILABLE, wrapped with
// "catalogentries: list".
func (s *Service) List(ctx context.Context, f db.CatalogFilter, limit int) (_ []catalog.EntryView, _ int, err error) {
	defer derrors.Wrap(&err, "catalogentries: list")
	entries, err := db.CatalogEntryList(ctx, s.Pool, f)
	if err != nil {
		return nil, 0, err
	}
	n := len(entries)
	if limit > 0 {
		n = min(limit, n)
	}
	out := make([]catalog.EntryView, 0, n)
	for i := range entries[:n] {
		out = append(out, catalog.NewEntryView(&entries[i], false))
	}
	return out, len(entries), nil
}

// Get returns entry id, or (id == "") the entry named name exactly, as a view with the URL
// redacted. Errors: NOT_FOUND, UNAVAILABLE, wrapped with "catalogentries: get <id|name>".
func (s *Service) Get(ctx context.Context, id, name string) (_ *catalog.EntryView, err error) {
	defer derrors.Wrap(&err, "catalogentries: get %s", cmp.Or(id, name))
	var e *db.CatalogEntry
	if id != "" {
		e, err = db.CatalogEntryGet(ctx, s.Pool, id)
	} else {
		e, err = db.CatalogEntryGetByName(ctx, s.Pool, name)
	}
	if err != nil {
		return nil, err
	}
	v := catalog.NewEntryView(e, false)
	return &v, nil
}
