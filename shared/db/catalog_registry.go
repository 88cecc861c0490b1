package db

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
)

// CatalogRegistryEntry is what a registry import writes on a catalog entry: one remote of
// one server version (docs/REGISTRY.md). Name is only used when the entry is created (an
// entry's name never changes under its installs); the tier is never written (imports are
// unverified until a superuser promotes them) and neither are runtime fields.
type CatalogRegistryEntry struct {
	Name            string
	URL             string
	TransportType   string
	Headers         map[string]string
	Description     string
	Version         string
	Author          string
	RegistryURL     string
	RegistryName    string
	RegistryRemote  int
	RegistryStatus  string
	PublishedAt     *time.Time
	URLVariables    []URLVariable
	DeclaredHeaders []DeclaredHeader
}

// Registry upsert outcomes.
const (
	RegistryCreated   = "created"
	RegistryUpdated   = "updated"
	RegistryUnchanged = "unchanged"
)

// CatalogEntryUpsertRegistry inserts or updates the entry of e's (registry name, remote)
// and says which (RegistryCreated, RegistryUpdated, RegistryUnchanged: nothing differed,
// updated_at kept). An entry of another source already holding e.Name is CONFLICT.
func CatalogEntryUpsertRegistry(ctx context.Context, q Querier, e *CatalogRegistryEntry) (string, error) {
	hj, _ := json.Marshal(nonNil(e.Headers))
	vars, decl := e.URLVariables, e.DeclaredHeaders
	if vars == nil {
		vars = []URLVariable{}
	}
	if decl == nil {
		decl = []DeclaredHeader{}
	}
	vj, _ := json.Marshal(vars)
	dj, _ := json.Marshal(decl)
	var inserted bool
	err := q.QueryRow(ctx, `INSERT INTO mcp_catalog_entries AS c
		(name, url, transport_type, headers, description, version, author, verification_tier, source,
		 registry_url, registry_name, registry_remote, registry_status, registry_published_at, url_variables, declared_headers)
		VALUES ($1, $2, $3, $4, $5, $6, $7, 'unverified', 'registry', $8, $9, $10, $11, $12, $13, $14)
		ON CONFLICT (registry_name, registry_remote) WHERE source = 'registry' DO UPDATE SET
			url = EXCLUDED.url, transport_type = EXCLUDED.transport_type, headers = EXCLUDED.headers,
			description = EXCLUDED.description, version = EXCLUDED.version, author = EXCLUDED.author,
			registry_url = EXCLUDED.registry_url, registry_status = EXCLUDED.registry_status,
			registry_published_at = EXCLUDED.registry_published_at, url_variables = EXCLUDED.url_variables,
			declared_headers = EXCLUDED.declared_headers, updated_at = now()
		WHERE (c.url, c.transport_type, c.headers, c.description, c.version, c.author, c.registry_url,
			c.registry_status, c.registry_published_at, c.url_variables, c.declared_headers)
			IS DISTINCT FROM (EXCLUDED.url, EXCLUDED.transport_type, EXCLUDED.headers, EXCLUDED.description,
			EXCLUDED.version, EXCLUDED.author, EXCLUDED.registry_url, EXCLUDED.registry_status,
			EXCLUDED.registry_published_at, EXCLUDED.url_variables, EXCLUDED.declared_headers)
		RETURNING (xmax = 0)`,
		e.Name, e.URL, e.TransportType, hj, e.Description, e.Version, e.Author, e.RegistryURL, e.RegistryName,
		e.RegistryRemote, e.RegistryStatus, e.PublishedAt, vj, dj).Scan(&inserted)
	switch {
	case err == nil && inserted:
		return RegistryCreated, nil
	case err == nil:
		return RegistryUpdated, nil
	case errors.Is(err, pgx.ErrNoRows): // the WHERE left the row alone: nothing changed
		return RegistryUnchanged, nil
	default:
		return "", Interpret(err)
	}
}

// CatalogEntryTierSet sets entry id's verification tier (a superuser's promotion of an
// imported entry) and returns the row; NOT_FOUND when absent.
func CatalogEntryTierSet(ctx context.Context, q Querier, id, tier string) (*CatalogEntry, error) {
	if !IsUUID(id) {
		return nil, notFound()
	}
	return one[CatalogEntry](ctx, q, `UPDATE mcp_catalog_entries SET verification_tier = $2, updated_at = now()
		WHERE id = $1 RETURNING `+catalogEntryCols, id, tier)
}
