package registrysync_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"testing"

	"github.com/agentpack/gateway/functions/healthcheck/health"
	"github.com/agentpack/gateway/functions/healthcheck/registrysync"
	"github.com/agentpack/gateway/shared/apperr"
	"github.com/agentpack/gateway/shared/db"
	"github.com/agentpack/gateway/shared/dbtest"
	"github.com/agentpack/gateway/shared/registry"
	"github.com/agentpack/gateway/shared/registry/registrytest"
	"github.com/agentpack/gateway/shared/urlguard"
	"github.com/aws/aws-lambda-go/events"
)

// TestScheduledSync (issue 24 item 3, scheduled sync): the schedule's input runs the
// import of the loopback registry (registrytest's real documents) on a real database as
// the sync's superuser: entries created unverified, a second run changes nothing, a
// superuser's promotion survives, the deleted entry stays hidden and deprecated flagged,
// and every write is an event_log row by registrysync.Actor. The health-check event still
// reaches the pass and never the registry.
func TestScheduledSync(t *testing.T) {
	t.Parallel()
	pool, _ := dbtest.Fresh(t)
	st := registrytest.NewStub(nil)
	srv := httptest.NewServer(st)
	defer srv.Close()
	s := &registrysync.Syncer{URL: srv.URL, Importer: &registry.Importer{Pool: pool,
		HTTPClient: urlguard.New(&urlguard.Options{AllowPrivate: true}).HTTPClient(0)}}
	passes := 0
	h := registrysync.Handler(s, func(context.Context, events.EventBridgeEvent) (*health.Summary, error) {
		passes++
		return &health.Summary{}, nil
	})
	input := json.RawMessage(`{"action": "registry-sync"}`)

	out, err := h(t.Context(), input)
	rep, _ := out.(*registry.Report)
	if err != nil || rep == nil || rep.Created != 22 || rep.Source != srv.URL {
		t.Fatalf("first sync: %+v %v", out, err)
	}
	var actors int
	if err := pool.QueryRow(t.Context(), `SELECT count(*) FROM event_log WHERE action = 'catalog_entry.imported' AND actor = $1`,
		registrysync.Actor).Scan(&actors); err != nil || actors != 22 {
		t.Errorf("event_log rows by the sync: %d %v", actors, err)
	}
	e, err := db.CatalogEntryGetByName(t.Context(), pool, "io.avax/avalanche-docs")
	if err != nil || e.VerificationTier != "unverified" || e.Source != "registry" {
		t.Fatalf("entry: %+v %v", e, err)
	}
	if _, err := pool.Exec(t.Context(), `UPDATE mcp_catalog_entries SET verification_tier = 'verified_community' WHERE id = $1`, e.ID); err != nil {
		t.Fatal(err)
	}

	out, err = h(t.Context(), input)
	rep, _ = out.(*registry.Report)
	if err != nil || rep == nil || rep.Created != 0 || rep.Updated != 0 || rep.Unchanged != 22 {
		t.Fatalf("second sync: %+v %v", out, err)
	}
	e, _ = db.CatalogEntryGetByName(t.Context(), pool, "io.avax/avalanche-docs")
	if e.VerificationTier != "verified_community" {
		t.Errorf("promotion lost: %s", e.VerificationTier)
	}
	list, _ := db.CatalogEntryList(t.Context(), pool, db.CatalogFilter{Source: "registry"})
	for _, l := range list {
		if l.Name == "io.github.getcyphrex/cyphrex-mcp" {
			t.Error("deleted entry listed after sync")
		}
	}
	if dep, _ := db.CatalogEntryGetByName(t.Context(), pool, "com.aradia/sovereign-hardware"); dep == nil || *dep.RegistryStatus != "deprecated" {
		t.Errorf("deprecated: %+v", dep)
	}

	pages := st.Pages()
	ev, _ := json.Marshal(events.EventBridgeEvent{ID: "1", DetailType: "Scheduled Event", Source: "aws.events"})
	if out, err := h(t.Context(), ev); err != nil || passes != 1 || st.Pages() != pages {
		t.Errorf("health event: %+v %v, passes %d, registry pages %d→%d", out, err, passes, pages, st.Pages())
	}
}

// TestScheduledSyncErrors: no URL configured, an unreachable registry (nothing written), a
// nil syncer and an input that is not an object are errors with their codes.
func TestScheduledSyncErrors(t *testing.T) {
	t.Parallel()
	pool, _ := dbtest.Fresh(t)
	im := &registry.Importer{Pool: pool, HTTPClient: urlguard.New(&urlguard.Options{AllowPrivate: true}).HTTPClient(0)}
	input := json.RawMessage(`{"action": "registry-sync"}`)
	if _, err := registrysync.Handler(&registrysync.Syncer{Importer: im}, nil)(t.Context(), input); apperr.CodeOf(err) != apperr.Validation {
		t.Errorf("no url: %v", err)
	}
	down := httptest.NewServer(registrytest.NewStub(nil))
	down.Close()
	if _, err := registrysync.Handler(&registrysync.Syncer{Importer: im, URL: down.URL}, nil)(t.Context(), input); apperr.CodeOf(err) != apperr.UpstreamUnavailable {
		t.Errorf("down: %v", err)
	}
	var n int
	_ = pool.QueryRow(t.Context(), `SELECT count(*) FROM mcp_catalog_entries WHERE source = 'registry'`).Scan(&n)
	if n != 0 {
		t.Errorf("%d entries written by a failed sync", n)
	}
	if _, err := registrysync.Handler(nil, nil)(t.Context(), input); apperr.CodeOf(err) != apperr.Validation {
		t.Errorf("nil syncer: %v", err)
	}
	if _, err := registrysync.Handler(nil, nil)(t.Context(), json.RawMessage(`[1]`)); apperr.CodeOf(err) != apperr.Validation {
		t.Errorf("array input: %v", err)
	}
	if _, err := registrysync.Handler(nil, nil)(t.Context(), json.RawMessage(`{}`)); err == nil {
		t.Error("health event without a pass succeeded")
	}
}
