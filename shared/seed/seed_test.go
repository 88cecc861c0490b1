package seed_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/agentpack/gateway/shared/db"
	"github.com/agentpack/gateway/shared/dbtest"
	"github.com/agentpack/gateway/shared/headers"
	"github.com/agentpack/gateway/shared/seed"
	"github.com/agentpack/gateway/shared/urlguard"
)

// TestCatalogShape: 18 vendor servers (verified_community, https, passing the deployed
// URL guard) and 12 placeholders (unverified, YOUR-HOST), unique names, valid header
// templates.
func TestCatalogShape(t *testing.T) {
	t.Parallel()
	strict := urlguard.New(&urlguard.Options{RequireHTTPS: true})
	names := map[string]bool{}
	vendors, placeholders := 0, 0
	for _, e := range seed.Catalog {
		if names[e.Name] {
			t.Errorf("duplicate name %q", e.Name)
		}
		names[e.Name] = true
		if err := headers.Validate(e.Headers); err != nil {
			t.Errorf("%s: header templates: %v", e.Name, err)
		}
		if e.TransportType != "streamable-http" && e.TransportType != "sse" {
			t.Errorf("%s: transport %q", e.Name, e.TransportType)
		}
		if e.IsPlaceholder {
			placeholders++
			if e.VerificationTier != "unverified" || !strings.Contains(e.URL, "YOUR-HOST") {
				t.Errorf("placeholder %s: %+v", e.Name, e)
			}
			continue
		}
		vendors++
		if e.VerificationTier != "verified_community" {
			t.Errorf("%s: tier %q", e.Name, e.VerificationTier)
		}
		if err := strict.CheckURL(e.URL); err != nil {
			t.Errorf("%s: %v", e.Name, err)
		}
	}
	if vendors != 18 || placeholders != 12 {
		t.Errorf("%d vendors + %d placeholders, want 18 + 12", vendors, placeholders)
	}
}

// TestLoadTwiceKeepsRuntimeFields: re-seeding never overwrites install_count or the
// health columns, keeps an admin's edit of a curated field (seed_digest), restores an entry
// from before the digest, and leaves unchanged rows' updated_at.
func TestLoadTwiceKeepsRuntimeFields(t *testing.T) {
	t.Parallel()
	pool, _ := dbtest.Fresh(t)
	ctx := context.Background()
	if err := seed.Load(ctx, pool); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM mcp_catalog_entries`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != len(seed.Catalog) {
		t.Fatalf("%d rows after the first load, want %d", n, len(seed.Catalog))
	}
	checked := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	if _, err := pool.Exec(ctx, `UPDATE mcp_catalog_entries SET install_count = 42, health_status = 'stale',
		last_health_check = $1, last_health_error = 'timeout', consecutive_failures = 2 WHERE name = 'DeepWiki'`, checked); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `UPDATE mcp_catalog_entries SET description = 'edited by hand', updated_at = now() - interval '1 day'
		WHERE name = 'Linear'`); err != nil {
		t.Fatal(err)
	}
	// An entry written before migrations/00050 has no digest: re-seeding restores it once.
	if _, err := pool.Exec(ctx, `UPDATE mcp_catalog_entries SET description = 'from before the digest', seed_digest = NULL
		WHERE name = 'Notion'`); err != nil {
		t.Fatal(err)
	}
	var before time.Time
	if err := pool.QueryRow(ctx, `SELECT updated_at FROM mcp_catalog_entries WHERE name = 'Sentry'`).Scan(&before); err != nil {
		t.Fatal(err)
	}

	for range 2 {
		if err := seed.Load(ctx, pool); err != nil {
			t.Fatal(err)
		}
	}
	var e db.CatalogEntry
	got, err := db.CatalogEntryGetByName(ctx, pool, "DeepWiki")
	if err != nil {
		t.Fatal(err)
	}
	e = *got
	if e.InstallCount != 42 || e.HealthStatus == nil || *e.HealthStatus != "stale" || e.LastHealthCheck == nil ||
		!e.LastHealthCheck.Equal(checked) || e.LastHealthError == nil || *e.LastHealthError != "timeout" || e.ConsecutiveFailures != 2 {
		t.Errorf("runtime fields after re-seeding: %+v", e)
	}
	// An admin's edit of a curated field stays (seed_digest, migrations/00050).
	linear, _ := db.CatalogEntryGetByName(ctx, pool, "Linear")
	if linear.Description != "edited by hand" {
		t.Errorf("re-seeding overwrote an admin's edit: %q", linear.Description)
	}
	notion, _ := db.CatalogEntryGetByName(ctx, pool, "Notion")
	if notion.Description == "from before the digest" {
		t.Error("re-seeding did not restore an entry without a digest")
	}
	var after time.Time
	if err := pool.QueryRow(ctx, `SELECT updated_at FROM mcp_catalog_entries WHERE name = 'Sentry'`).Scan(&after); err != nil {
		t.Fatal(err)
	}
	if !after.Equal(before) {
		t.Errorf("re-seeding touched an unchanged row's updated_at: %v → %v", before, after)
	}
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM mcp_catalog_entries`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != len(seed.Catalog) {
		t.Errorf("%d rows after re-seeding", n)
	}
}
