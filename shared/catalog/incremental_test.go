package catalog_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentpack/gateway/shared/catalog"
	"github.com/agentpack/gateway/shared/db"
	"github.com/agentpack/gateway/shared/dbtest"
	"github.com/google/go-cmp/cmp"
)

// recordingStore is a real disk store that records the keys it is asked to write and
// delete.
type recordingStore struct {
	catalog.Store
	mu      sync.Mutex
	puts    []string
	deletes []string
}

func (s *recordingStore) PutObject(ctx context.Context, key string, data []byte) (string, error) {
	s.mu.Lock()
	s.puts = append(s.puts, key)
	s.mu.Unlock()
	return s.Store.PutObject(ctx, key, data)
}

func (s *recordingStore) DeleteObject(ctx context.Context, key string) error {
	s.mu.Lock()
	s.deletes = append(s.deletes, key)
	s.mu.Unlock()
	return s.Store.DeleteObject(ctx, key)
}

// reset returns the writes and deletes recorded so far and forgets them.
func (s *recordingStore) reset() (puts, deletes []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	puts, deletes = s.puts, s.deletes
	s.puts, s.deletes = nil, nil
	return puts, deletes
}

// toolDefs is n tool definitions; variant changes every description (a refresh that
// found new definitions).
func toolDefs(n int, variant string) []db.ToolDef {
	defs := make([]db.ToolDef, n)
	for i := range defs {
		defs[i] = db.ToolDef{Name: fmt.Sprintf("tool_%d", i), Title: fmt.Sprintf("Tool %d", i),
			Description: "Does thing " + variant + fmt.Sprint(i),
			InputSchema: json.RawMessage(`{"type":"object","properties":{"id":{"type":"string"}}}`),
			Annotations: json.RawMessage(`{"readOnlyHint":true}`)}
	}
	return defs
}

// incWorld is a workspace of many connections with a full rebuild already stored.
type incWorld struct {
	pool  *db.Pool
	store *recordingStore
	ws    string
	ids   []string
}

func newIncWorld(t *testing.T, conns int) *incWorld {
	t.Helper()
	pool, _ := dbtest.Fresh(t)
	ctx := t.Context()
	w := &incWorld{pool: pool, store: &recordingStore{Store: &catalog.DiskStore{Dir: t.TempDir()}},
		ws: "a1000000-0000-4000-8000-0000000000a1"}
	dbtest.Workspace(t, pool, dbtest.WorkspaceOpts{ID: w.ws, Name: "Many"})
	for i := range conns {
		w.ids = append(w.ids, w.create(t, fmt.Sprintf("Server %d", i), &w.ws))
	}
	if err := catalog.Rebuild(ctx, pool, w.store, []string{w.ws}); err != nil {
		t.Fatal(err)
	}
	w.store.reset()
	return w
}

// create inserts an enabled connection (ws nil: global) with five tools and returns its id.
func (w *incWorld) create(t *testing.T, name string, ws *string) string {
	t.Helper()
	c := dbtest.Connection(t, w.pool, dbtest.ConnectionOpts{Name: name, URL: "https://up.example.com/" + name + "?key=s", WorkspaceID: ws})
	if _, err := db.ConnectionToolsSync(t.Context(), w.pool, c.ID, c.Handle, toolDefs(5, "v1"), false); err != nil {
		t.Fatal(err)
	}
	return c.ID
}

// same fails unless workspace ws's stored document (assembled from index and parts) is
// exactly what a full build from Postgres makes, generation time aside: byte for byte
// once both are encoded.
func (w *incWorld) same(t *testing.T, step, ws string) {
	t.Helper()
	got, _, err := catalog.ReadDocument(t.Context(), w.store, ws)
	if err != nil {
		t.Fatalf("%s: read: %v", step, err)
	}
	want, err := catalog.Build(t.Context(), w.pool, ws)
	if err != nil {
		t.Fatal(err)
	}
	got.GeneratedAt, want.GeneratedAt = time.Time{}, time.Time{}
	gb, _ := json.Marshal(got)
	wb, _ := json.Marshal(want)
	if string(gb) != string(wb) {
		t.Fatalf("%s: the incremental document differs from a full rebuild (-full +incremental):\n%s", step, cmp.Diff(want, got))
	}
}

// TestIncrementalEqualsFullRebuild: on a workspace of 50 connections an install, a
// refresh (new definitions, a tool gone, one added), a toggle off and on and an
// uninstall, each published with RebuildConnections for that connection only, leave
// exactly the document a full rebuild makes — and each writes only that connection's part
// and the index, deleting only the standalone part it replaced (a part inside the full
// rebuild's pack stays while other connections use the pack).
func TestIncrementalEqualsFullRebuild(t *testing.T) {
	t.Parallel()
	w := newIncWorld(t, 50)
	ctx := t.Context()
	w.same(t, "after the full rebuild", w.ws)

	publish := func(step, id string, wantPuts, wantDeletes int) {
		t.Helper()
		if err := catalog.RebuildConnections(ctx, w.pool, w.store, []string{w.ws}, id); err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		puts, deletes := w.store.reset()
		index := 0
		for _, k := range puts {
			switch {
			case k == catalog.IndexKey(w.ws):
				index++
			case !strings.HasPrefix(k, "catalog/v2/workspaces/"+w.ws+"/parts/"+id+"."):
				t.Errorf("%s wrote %s, another connection's part", step, k)
			}
		}
		if len(puts) != wantPuts || index != 1 || len(deletes) != wantDeletes {
			t.Errorf("%s: writes %v, deletes %v; want %d writes (the index once), %d deletes", step, puts, deletes, wantPuts, wantDeletes)
		}
		for _, k := range deletes {
			if !strings.HasPrefix(k, "catalog/v2/workspaces/"+w.ws+"/parts/"+id+".") {
				t.Errorf("%s deleted %s, another connection's part", step, k)
			}
		}
		w.same(t, step, w.ws)
	}

	added := w.create(t, "Installed Later", &w.ws)
	publish("install", added, 2, 0)

	defs := toolDefs(6, "v2")[1:] // tool_0 gone, tool_5 new, the rest redefined
	c7, err := db.ConnectionGet(ctx, w.pool, w.ids[7])
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.ConnectionToolsSync(ctx, w.pool, c7.ID, c7.Handle, defs, false); err != nil {
		t.Fatal(err)
	}
	publish("refresh", w.ids[7], 2, 0) // the old part is in the rebuild's pack, which the others still use
	if _, err := db.ConnectionToolsSync(ctx, w.pool, c7.ID, c7.Handle, toolDefs(3, "v3"), false); err != nil {
		t.Fatal(err)
	}
	publish("second refresh", w.ids[7], 2, 1) // now the replaced part stood alone: deleted

	off := false
	if _, err := db.ConnectionUpdateByID(ctx, w.pool, w.ids[20], &db.ConnectionUpdate{Enabled: &off}); err != nil {
		t.Fatal(err)
	}
	publish("toggle off", w.ids[20], 1, 0)
	on := true
	if _, err := db.ConnectionUpdateByID(ctx, w.pool, w.ids[20], &db.ConnectionUpdate{Enabled: &on}); err != nil {
		t.Fatal(err)
	}
	publish("toggle on", w.ids[20], 2, 0)

	if _, err := db.ConnectionDelete(ctx, w.pool, w.ids[33]); err != nil {
		t.Fatal(err)
	}
	publish("uninstall", w.ids[33], 1, 0)

	// Nothing changed: nothing is written, the ETag stays.
	_, tag1, _ := catalog.ReadDocument(ctx, w.store, w.ws)
	if err := catalog.RebuildConnections(ctx, w.pool, w.store, []string{w.ws}, w.ids[3]); err != nil {
		t.Fatal(err)
	}
	if puts, _ := w.store.reset(); len(puts) != 0 {
		t.Errorf("an unchanged connection wrote %v", puts)
	}
	if _, tag2, _ := catalog.ReadDocument(ctx, w.store, w.ws); tag2 != tag1 {
		t.Errorf("an unchanged connection changed the ETag %s → %s", tag1, tag2)
	}
}

// TestIncrementalGlobalAndDrift: a new global connection is added to every workspace's
// document by its part alone; an index that lacks a connection Postgres shows (a publish
// that failed after its commit) makes the next incremental change rebuild the workspace
// whole, so that it converges.
func TestIncrementalGlobalAndDrift(t *testing.T) {
	t.Parallel()
	w := newIncWorld(t, 5)
	ctx := t.Context()
	other := "b2000000-0000-4000-8000-0000000000b2"
	dbtest.Workspace(t, w.pool, dbtest.WorkspaceOpts{ID: other, Name: "Other"})
	if err := catalog.Rebuild(ctx, w.pool, w.store, []string{other}); err != nil {
		t.Fatal(err)
	}
	w.store.reset()
	g := w.create(t, "Global", nil)
	if err := catalog.RebuildConnections(ctx, w.pool, w.store, nil, g); err != nil {
		t.Fatal(err)
	}
	if puts, _ := w.store.reset(); len(puts) != 4 {
		t.Errorf("global install wrote %v, want one part and the index per workspace", puts)
	}
	w.same(t, "global install (own workspace)", w.ws)
	w.same(t, "global install (other workspace)", other)

	w.create(t, "Never Published", &w.ws) // its publish "failed"
	next := w.create(t, "Next", &w.ws)
	if err := catalog.RebuildConnections(ctx, w.pool, w.store, []string{w.ws}, next); err != nil {
		t.Fatal(err)
	}
	w.same(t, "after drift", w.ws)

	// A missing index is rebuilt whole too.
	if err := w.store.DeleteObject(ctx, catalog.IndexKey(other)); err != nil {
		t.Fatal(err)
	}
	if err := catalog.RebuildConnections(ctx, w.pool, w.store, []string{other}, g); err != nil {
		t.Fatal(err)
	}
	w.same(t, "missing index", other)
}

// countingGets is a real store that counts reads.
type countingGets struct {
	catalog.Store
	gets atomic.Int64
}

func (s *countingGets) GetObject(ctx context.Context, key, inm string) ([]byte, string, error) {
	s.gets.Add(1)
	return s.Store.GetObject(ctx, key, inm)
}

// TestRebuildPacks: a whole rebuild writes every part into one pack, so that a cold read
// is two GETs (the index and the pack); a rebuild that finds nothing changed writes
// nothing; after incremental changes a rebuild repacks and deletes the old pack and the
// standalone parts, and the document stays what a full build makes.
func TestRebuildPacks(t *testing.T) {
	t.Parallel()
	w := newIncWorld(t, 20)
	ctx := t.Context()
	counting := &countingGets{Store: w.store}
	if _, err := catalog.Load(ctx, counting, w.ws, nil); err != nil || counting.gets.Load() != 2 {
		t.Fatalf("cold read of a packed workspace: %v, %d GETs, want 2", err, counting.gets.Load())
	}
	if err := catalog.Rebuild(ctx, w.pool, w.store, []string{w.ws}); err != nil {
		t.Fatal(err)
	}
	if puts, _ := w.store.reset(); len(puts) != 0 {
		t.Errorf("an unchanged rebuild wrote %v", puts)
	}
	added := w.create(t, "Later", &w.ws)
	if err := catalog.RebuildConnections(ctx, w.pool, w.store, []string{w.ws}, added); err != nil {
		t.Fatal(err)
	}
	w.store.reset()
	if err := catalog.Rebuild(ctx, w.pool, w.store, []string{w.ws}); err != nil {
		t.Fatal(err)
	}
	puts, deletes := w.store.reset()
	if len(puts) != 2 || !strings.Contains(puts[0], "/packs/") || len(deletes) != 2 {
		t.Errorf("repack wrote %v and deleted %v; want a pack and the index, the old pack and the standalone part gone", puts, deletes)
	}
	w.same(t, "after repack", w.ws)
}
