package db

import (
	"context"
	"encoding/json"
	"time"
)

const catalogEntryCols = `id, name, url, transport_type, headers, description, category, version, author,
	verification_tier, health_status, last_health_check, last_health_error, last_commit_date,
	consecutive_failures, install_count, is_placeholder, created_at, updated_at,
	source, registry_url, registry_name, registry_remote, registry_status, registry_published_at,
	url_variables, declared_headers`

// CatalogFilter narrows CatalogEntryList: Search matches name, description and author
// case-insensitively; Category matches case-insensitively ("Databases" = "databases").
// Source matches the entry's source ("curated", "admin", "registry"). Empty fields do not
// filter. Entries their registry deleted are never listed (docs/REGISTRY.md). Limit 0
// means every entry; Offset skips that many.
type CatalogFilter struct {
	Search   string
	Category string
	Source   string
	Limit    int
	Offset   int
}

// CatalogEntryList returns the catalog ordered by name (one page of it when f.Limit > 0).
func CatalogEntryList(ctx context.Context, q Querier, f CatalogFilter) ([]CatalogEntry, error) {
	out, _, err := CatalogEntryPage(ctx, q, f)
	return out, err
}

// CatalogEntryPage is CatalogEntryList that also returns how many entries match the
// filter in all (for pagination).
func CatalogEntryPage(ctx context.Context, q Querier, f CatalogFilter) ([]CatalogEntry, int, error) {
	var limit *int
	if f.Limit > 0 {
		limit = &f.Limit
	}
	type row struct {
		CatalogEntry
		Total int `db:"total"`
	}
	rows, err := collect[row](ctx, q, `SELECT `+catalogEntryCols+`, count(*) OVER () AS total FROM mcp_catalog_entries
		WHERE ($1 = '' OR name ILIKE '%' || $1 || '%' OR description ILIKE '%' || $1 || '%' OR author ILIKE '%' || $1 || '%')
		  AND ($2 = '' OR lower(category) = lower($2)) AND ($5 = '' OR source = $5)
		  AND registry_status IS DISTINCT FROM 'deleted'
		ORDER BY name LIMIT $3 OFFSET $4`, f.Search, f.Category, limit, f.Offset, f.Source)
	if err != nil {
		return nil, 0, err
	}
	out := make([]CatalogEntry, len(rows))
	total := 0
	for i := range rows {
		out[i], total = rows[i].CatalogEntry, rows[i].Total
	}
	if len(rows) == 0 && f.Offset > 0 {
		// Past the end: count without the page.
		if err := q.QueryRow(ctx, `SELECT count(*) FROM mcp_catalog_entries
			WHERE ($1 = '' OR name ILIKE '%' || $1 || '%' OR description ILIKE '%' || $1 || '%' OR author ILIKE '%' || $1 || '%')
			  AND ($2 = '' OR lower(category) = lower($2)) AND ($3 = '' OR source = $3)
			  AND registry_status IS DISTINCT FROM 'deleted'`, f.Search, f.Category, f.Source).Scan(&total); err != nil {
			return nil, 0, Interpret(err)
		}
	}
	return out, total, nil
}

// Category is one catalog category with how many entries carry it.
type Category struct {
	Name  string `db:"name" json:"name"`
	Count int    `db:"count" json:"count"`
}

// CatalogCategories lists the catalog's categories ordered by name, case variants merged
// (named by their lowest spelling), entries without a category left out.
func CatalogCategories(ctx context.Context, q Querier) ([]Category, error) {
	return collect[Category](ctx, q, `SELECT min(category) AS name, count(*) AS count FROM mcp_catalog_entries
		WHERE category <> '' AND registry_status IS DISTINCT FROM 'deleted' GROUP BY lower(category) ORDER BY lower(category)`)
}

// CatalogEntryGet returns entry id, or NOT_FOUND (also for a malformed id).
func CatalogEntryGet(ctx context.Context, q Querier, id string) (*CatalogEntry, error) {
	if !IsUUID(id) {
		return nil, notFound()
	}
	return one[CatalogEntry](ctx, q, `SELECT `+catalogEntryCols+` FROM mcp_catalog_entries WHERE id = $1`, id)
}

// CatalogEntryGetByName returns the entry called name, or NOT_FOUND.
func CatalogEntryGetByName(ctx context.Context, q Querier, name string) (*CatalogEntry, error) {
	return one[CatalogEntry](ctx, q, `SELECT `+catalogEntryCols+` FROM mcp_catalog_entries WHERE name = $1`, name)
}

// CatalogSeedEntry is the curated (seed) part of a catalog entry: the fields shared/seed
// owns. Runtime fields (install_count, health columns) are never in it.
type CatalogSeedEntry struct {
	Name             string
	URL              string
	TransportType    string
	Headers          map[string]string
	Description      string
	Category         string
	Version          string
	Author           string
	VerificationTier string
	IsPlaceholder    bool
	LastCommitDate   *time.Time
}

// seedDigest is the SQL of the digest of a catalog entry's curated fields as the seed
// writes them (migrations/00050): the md5 of the row of those fields, read from the table
// alias t (mcp_catalog_entries or EXCLUDED).
func seedDigest(t string) string {
	return `md5(row(` + t + `.url, ` + t + `.transport_type, ` + t + `.headers, ` + t + `.description, ` +
		t + `.category, ` + t + `.version, ` + t + `.author, ` + t + `.verification_tier, ` + t + `.is_placeholder)::text)`
}

// CatalogEntryUpsertSeed inserts or updates e keyed by name. It never touches runtime
// fields (install_count, health_status, last_health_*, consecutive_failures): re-seeding
// is idempotent (docs/DESIGN.md §3). It never overwrites an admin's edit either
// (migrations/00050): an existing entry is rewritten only while its curated fields still
// hash to seed_digest, the digest of what the seed last wrote (or when it has none, an
// entry from before the column); an edited entry keeps the admin's values and its digest.
func CatalogEntryUpsertSeed(ctx context.Context, q Querier, e *CatalogSeedEntry) error {
	h := e.Headers
	if h == nil {
		h = map[string]string{}
	}
	hj, _ := json.Marshal(h)
	_, err := q.Exec(ctx, `INSERT INTO mcp_catalog_entries AS t
		(name, url, transport_type, headers, description, category, version, author, verification_tier, is_placeholder,
		 last_commit_date, seed_digest)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11,
			md5(row($2::text, $3::text, $4::jsonb, $5::text, $6::text, $7::text, $8::text, $9::text, $10::boolean)::text))
		ON CONFLICT (name) DO UPDATE SET url = EXCLUDED.url, transport_type = EXCLUDED.transport_type,
			headers = EXCLUDED.headers, description = EXCLUDED.description, category = EXCLUDED.category,
			version = EXCLUDED.version, author = EXCLUDED.author, verification_tier = EXCLUDED.verification_tier,
			is_placeholder = EXCLUDED.is_placeholder, last_commit_date = EXCLUDED.last_commit_date,
			seed_digest = `+seedDigest("EXCLUDED")+`,
			updated_at = CASE WHEN (t.url, t.transport_type, t.headers, t.description, t.category, t.version,
				t.author, t.verification_tier, t.is_placeholder)
				IS DISTINCT FROM (EXCLUDED.url, EXCLUDED.transport_type, EXCLUDED.headers, EXCLUDED.description,
				EXCLUDED.category, EXCLUDED.version, EXCLUDED.author, EXCLUDED.verification_tier, EXCLUDED.is_placeholder)
				THEN now() ELSE t.updated_at END
		WHERE t.seed_digest IS NULL OR t.seed_digest = `+seedDigest("t"),
		e.Name, e.URL, e.TransportType, hj, e.Description, e.Category, e.Version, e.Author,
		e.VerificationTier, e.IsPlaceholder, e.LastCommitDate)
	return Interpret(err)
}

// CatalogEntryAddInstalls adds delta (+1 install, -1 uninstall) to install_count, never
// going below zero.
func CatalogEntryAddInstalls(ctx context.Context, q Querier, id string, delta int) error {
	_, err := q.Exec(ctx, `UPDATE mcp_catalog_entries SET install_count = GREATEST(install_count + $2, 0) WHERE id = $1`, id, delta)
	return Interpret(err)
}
