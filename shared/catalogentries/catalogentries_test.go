package catalogentries_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/agentpack/gateway/shared/apperr"
	"github.com/agentpack/gateway/shared/auth"
	"github.com/agentpack/gateway/shared/catalogentries"
	"github.com/agentpack/gateway/shared/db"
	"github.com/agentpack/gateway/shared/dbtest"
)

const ws = "aaaaaaaa-0000-4000-8000-000000000001"

var (
	super = &auth.Principal{Subject: "root", Role: auth.RoleSuperuser}
	admin = &auth.Principal{Subject: "adm", Role: auth.RoleAdmin, Workspaces: []string{ws}}
)

func ptr[T any](v T) *T { return &v }

// events counts the event_log rows of entry id with action (test-only SQL: no db query
// lists events without a workspace).
func events(t *testing.T, pool *db.Pool, id, action string) int {
	t.Helper()
	var n int
	if err := pool.QueryRow(t.Context(), `SELECT count(*) FROM event_log
		WHERE entity_type = $1 AND entity_id = $2 AND action = $3`, catalogentries.EntityType, id, action).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestServiceWrites: create, update and delete each write the entry and one event; a
// non-superuser is FORBIDDEN and writes nothing; the name conflict keeps its message.
func TestServiceWrites(t *testing.T) {
	t.Parallel()
	pool, _ := dbtest.Fresh(t)
	ctx := t.Context()
	s := &catalogentries.Service{Pool: pool}

	in := &db.CatalogEntryInput{Name: ptr("Weather"), URL: ptr("https://weather.example/mcp?key=secret"),
		Headers: map[string]string{"Authorization": "Bearer real-secret"}}
	if _, err := s.Create(ctx, admin, in); apperr.CodeOf(err) != apperr.Forbidden {
		t.Fatalf("create as admin: %v, want FORBIDDEN", err)
	}
	if _, err := db.CatalogEntryGetByName(ctx, pool, "Weather"); apperr.CodeOf(err) != apperr.NotFound {
		t.Fatalf("a refused create wrote the entry: %v", err)
	}
	e, err := s.Create(ctx, super, in)
	if err != nil {
		t.Fatal(err)
	}
	if e.Name != "Weather" || events(t, pool, e.ID, catalogentries.ActionCreated) != 1 {
		t.Fatalf("created %+v; want one %s event", e, catalogentries.ActionCreated)
	}
	var payload string
	if err := pool.QueryRow(ctx, `SELECT payload::text FROM event_log WHERE entity_id = $1`, e.ID).Scan(&payload); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(payload, "secret") {
		t.Errorf("event payload leaks a secret: %s", payload)
	}

	_, err = s.Create(ctx, super, in)
	if apperr.CodeOf(err) != apperr.Conflict || apperr.Public(err).Message != `a catalog entry named "Weather" already exists` {
		t.Fatalf("second create: %v, want CONFLICT naming the entry", err)
	}

	if _, err := s.Update(ctx, admin, e.ID, &db.CatalogEntryInput{Category: ptr("x")}); apperr.CodeOf(err) != apperr.Forbidden {
		t.Fatalf("update as admin: %v, want FORBIDDEN", err)
	}
	u, err := s.Update(ctx, super, e.ID, &db.CatalogEntryInput{Category: ptr("Weather & Maps")})
	if err != nil || u.Category != "Weather & Maps" || u.Name != "Weather" || events(t, pool, e.ID, catalogentries.ActionUpdated) != 1 {
		t.Fatalf("update = %+v, %v; want the new category and one event", u, err)
	}
	other, err := s.Create(ctx, super, &db.CatalogEntryInput{Name: ptr("Other"), URL: ptr("https://other.example/mcp")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Update(ctx, super, other.ID, &db.CatalogEntryInput{Name: ptr("Weather")}); apperr.CodeOf(err) != apperr.Conflict {
		t.Fatalf("rename onto a taken name: %v, want CONFLICT", err)
	}
	if _, err := s.Update(ctx, super, "bbbbbbbb-0000-4000-8000-000000000002", &db.CatalogEntryInput{}); apperr.CodeOf(err) != apperr.NotFound {
		t.Fatalf("update of an unknown entry: %v, want NOT_FOUND", err)
	}

	if err := s.Delete(ctx, admin, e.ID); apperr.CodeOf(err) != apperr.Forbidden {
		t.Fatalf("delete as admin: %v, want FORBIDDEN", err)
	}
	if err := s.Delete(ctx, super, e.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := db.CatalogEntryGet(ctx, pool, e.ID); apperr.CodeOf(err) != apperr.NotFound {
		t.Fatalf("deleted entry still there: %v", err)
	}
	if n := events(t, pool, e.ID, catalogentries.ActionDeleted); n != 1 {
		t.Fatalf("%d delete events, want 1", n)
	}
	if err := s.Delete(ctx, super, e.ID); apperr.CodeOf(err) != apperr.NotFound {
		t.Fatalf("second delete: %v, want NOT_FOUND", err)
	}
}

// TestDeleteInstalledEntry: an installed entry is not deleted (CONFLICT, no event), and
// the wrapped service error still carries its operation, id and HTTP status.
func TestDeleteInstalledEntry(t *testing.T) {
	t.Parallel()
	pool, _ := dbtest.Fresh(t)
	ctx := t.Context()
	s := &catalogentries.Service{Pool: pool}
	dbtest.Workspace(t, pool, dbtest.WorkspaceOpts{ID: ws, Name: "ws"})
	e, err := s.Create(ctx, super, &db.CatalogEntryInput{Name: ptr("Installed"), URL: ptr("https://i.example/mcp")})
	if err != nil {
		t.Fatal(err)
	}
	w := ws
	dbtest.Connection(t, pool, dbtest.ConnectionOpts{Name: "Installed", URL: e.URL, TransportType: e.TransportType,
		CatalogEntryID: &e.ID, WorkspaceID: &w})
	err = s.Delete(ctx, super, e.ID)
	pub := apperr.Public(err)
	if pub.Code != apperr.Conflict || pub.Code.HTTPStatus() != http.StatusConflict || pub.Message != "Installed is installed in 1 workspace(s)" {
		t.Fatalf("delete of an installed entry: %v, want 409 CONFLICT", err)
	}
	if !strings.HasPrefix(err.Error(), "catalogentries: delete "+e.ID+": ") {
		t.Errorf("error %q does not name the operation and the id", err)
	}
	if _, err := db.CatalogEntryGet(ctx, pool, e.ID); err != nil {
		t.Fatalf("installed entry deleted: %v", err)
	}
	if n := events(t, pool, e.ID, catalogentries.ActionDeleted); n != 0 {
		t.Fatalf("%d delete events for a refused delete", n)
	}
}

// TestServiceReads: List filters and limits but counts every match, Get finds by id or
// exact name, and both show the redacted view (never a header value or a URL secret).
func TestServiceReads(t *testing.T) {
	t.Parallel()
	pool, _ := dbtest.Fresh(t)
	ctx := t.Context()
	s := &catalogentries.Service{Pool: pool}
	for _, n := range []string{"Alpha Search", "Beta Search", "Gamma"} {
		if _, err := s.Create(ctx, super, &db.CatalogEntryInput{Name: ptr(n), URL: ptr("https://x.example/mcp?key=sk-live"),
			Headers: map[string]string{"X-Key": "sk-live"}}); err != nil {
			t.Fatal(err)
		}
	}
	list, total, err := s.List(ctx, db.CatalogFilter{Search: "search"}, 1)
	if err != nil || len(list) != 1 || total != 2 {
		t.Fatalf("List: %d of %d (%v), want 1 of 2", len(list), total, err)
	}
	if all, total, _ := s.List(ctx, db.CatalogFilter{Search: "search"}, 0); len(all) != total {
		t.Fatalf("List without a limit: %d of %d", len(all), total)
	}
	byName, err := s.Get(ctx, "", "Gamma")
	if err != nil {
		t.Fatal(err)
	}
	byID, err := s.Get(ctx, byName.ID, "")
	if err != nil || byID.Name != "Gamma" {
		t.Fatalf("Get by id: %+v %v", byID, err)
	}
	for _, v := range []string{byID.URL, byID.Headers["X-Key"], list[0].URL} {
		if strings.Contains(v, "sk-live") {
			t.Fatalf("a secret in the view: %q", v)
		}
	}
	if _, err := s.Get(ctx, "", "Nope"); apperr.CodeOf(err) != apperr.NotFound || !strings.Contains(err.Error(), "catalogentries: get Nope") {
		t.Fatalf("missing entry: %v", err)
	}
	pool.Close()
	if _, _, err := s.List(ctx, db.CatalogFilter{}, 0); apperr.CodeOf(err) != apperr.Unavailable {
		t.Fatalf("closed pool: %v", err)
	}
}
