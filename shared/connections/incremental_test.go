package connections_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentpack/gateway/shared/auth"
	"github.com/agentpack/gateway/shared/catalog"
	"github.com/agentpack/gateway/shared/connections"
	"github.com/agentpack/gateway/shared/db"
	"github.com/agentpack/gateway/shared/dbtest"
	"github.com/agentpack/gateway/shared/mcpclient"
	"github.com/agentpack/gateway/shared/testpeer"
	"github.com/agentpack/gateway/shared/urlguard"
)

// writeLog is a real disk store that records the keys written.
type writeLog struct {
	catalog.Store
	mu   sync.Mutex
	puts []string
}

func (s *writeLog) PutObject(ctx context.Context, key string, data []byte) (string, error) {
	s.mu.Lock()
	s.puts = append(s.puts, key)
	s.mu.Unlock()
	return s.Store.PutObject(ctx, key, data)
}

func (s *writeLog) take() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.puts
	s.puts = nil
	return p
}

// TestInstallWritesOnePart: in a workspace of 50 connections, installing one more
// through the service (a real upstream on loopback) writes exactly that connection's
// part and the index, and toggling it off and deleting it write the index only; after
// each the stored document is what a full rebuild makes.
func TestInstallWritesOnePart(t *testing.T) {
	pool, _ := dbtest.Fresh(t)
	ctx := t.Context()
	ws := dbtest.Workspace(t, pool, dbtest.WorkspaceOpts{ID: "cccccccc-0000-4000-8000-0000000000c1", Name: "ws"})
	for i := range 50 {
		c := dbtest.Connection(t, pool, dbtest.ConnectionOpts{Name: fmt.Sprintf("Seed %d", i), URL: "https://seed.example.com/mcp",
			WorkspaceID: &ws})
		if _, err := db.ConnectionToolsSync(ctx, pool, c.ID, c.Handle,
			[]db.ToolDef{{Name: "t", InputSchema: json.RawMessage(`{"type":"object"}`)}}, false); err != nil {
			t.Fatal(err)
		}
	}
	store := &writeLog{Store: &catalog.DiskStore{Dir: t.TempDir()}}
	if err := catalog.Rebuild(ctx, pool, store, []string{ws}); err != nil {
		t.Fatal(err)
	}
	store.take()
	guard := urlguard.New(&urlguard.Options{AllowPrivate: true})
	up := mcpclient.New(&mcpclient.Options{Guard: guard})
	t.Cleanup(func() { _ = up.Close() })
	svc := &connections.Service{Pool: pool, Store: store, Upstreams: up, Guard: guard}
	admin := &auth.Principal{Subject: "admin", Role: auth.RoleAdmin, Workspaces: []string{ws}}
	same := func(step string) {
		t.Helper()
		got, _, err := catalog.ReadDocument(ctx, store, ws)
		if err != nil {
			t.Fatal(err)
		}
		want, err := catalog.Build(ctx, pool, ws)
		if err != nil {
			t.Fatal(err)
		}
		got.GeneratedAt, want.GeneratedAt = time.Time{}, time.Time{}
		gb, _ := json.Marshal(got)
		wb, _ := json.Marshal(want)
		if string(gb) != string(wb) {
			t.Fatalf("%s: stored document differs from a full rebuild", step)
		}
	}

	out, err := svc.Create(ctx, admin, connections.CreateInput{Name: "Echo", URL: testpeer.NewFixture(t, nil).URL, WorkspaceID: &ws})
	if err != nil || out.Connect == nil || !out.Connect.OK || out.CatalogPending {
		t.Fatalf("create: %v %+v", err, out)
	}
	id := out.Connection.ID
	puts := store.take()
	if len(puts) != 2 || !strings.Contains(strings.Join(puts, " "), "/parts/"+id+".") ||
		!strings.Contains(strings.Join(puts, " "), catalog.IndexKey(ws)) {
		t.Errorf("install wrote %v, want its part and the index", puts)
	}
	same("install")

	if _, err := svc.Toggle(ctx, admin, id); err != nil {
		t.Fatal(err)
	}
	if puts := store.take(); len(puts) != 1 || puts[0] != catalog.IndexKey(ws) {
		t.Errorf("toggle off wrote %v, want the index only", puts)
	}
	same("toggle off")
	if err := svc.Delete(ctx, admin, id); err != nil {
		t.Fatal(err)
	}
	same("delete")
}
