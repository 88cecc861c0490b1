package gateway_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agentpack/gateway/functions/mcp/gateway"
	"github.com/agentpack/gateway/shared/auth"
	"github.com/agentpack/gateway/shared/catalog"
	"github.com/google/uuid"
)

// heldPartStore holds every read of one object (the part of the connection whose id is
// held) until open is closed: a lazy snapshot's background read then stays pending while
// the first tools/list page, which never needs that part, is answered.
type heldPartStore struct {
	catalog.Store
	held string
	open chan struct{}
}

func (s *heldPartStore) GetObject(ctx context.Context, key, inm string) ([]byte, string, error) {
	if strings.Contains(key, "/parts/"+s.held+".") {
		<-s.open
	}
	return s.Store.GetObject(ctx, key, inm)
}

// TestColdFirstPage: a process that holds no snapshot of the workspace answers the first
// tools/list page while the catalog is still being read (the part of the last server held
// back), and the page is byte for byte the one the whole catalog gives — with every tool
// listed, with the discovery threshold's built-ins-only page, in a project (its
// project-scoped server listed) and for a member; page 2 then waits for the whole catalog.
func TestColdFirstPage(t *testing.T) {
	c := newChurnEnv(t, 0)
	project := uuid.NewString()
	doc := c.base
	doc.GeneratedAt = time.Now().UTC()
	extra := scaleConnections(60, 20) // 1,200 tools more: two pages
	proj := scaleConnections(1, 3)[0]
	proj.ID, proj.Handle, proj.Scope, proj.ProjectID = uuid.NewString(), "aaproj", "project", project
	for i := range proj.Tools {
		proj.Tools[i].ExposedName = "mcp_aaproj_" + proj.Tools[i].UpstreamName
	}
	last := scaleConnections(1, 20)[0]
	last.ID, last.Handle = uuid.NewString(), "zzzz"
	for i := range last.Tools {
		last.Tools[i].ExposedName = "mcp_zzzz_" + last.Tools[i].UpstreamName
	}
	doc.Connections = append(append(append(append([]catalog.Connection(nil), c.base.Connections...), extra...), proj), last)
	b, _ := json.Marshal(doc)
	if _, err := putDoc(c.store, b); err != nil {
		t.Fatal(err)
	}
	member, err := auth.Mint(benchSecret, auth.Principal{Subject: "m", Role: auth.RoleMember, Workspaces: []string{c.ws}}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	v, err := auth.NewVerifier(context.Background(), auth.Options{Secret: benchSecret})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		hdr   map[string]string
		token string
	}{
		{"every tool", map[string]string{"X-MCP-Discovery": "all"}, ""},
		{"threshold", nil, ""},
		{"project", map[string]string{"X-MCP-Discovery": "all", "X-Project-Id": project}, ""},
		{"member", map[string]string{"X-MCP-Discovery": "all"}, member},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store := &heldPartStore{Store: c.store, held: last.ID, open: make(chan struct{})}
			cache := catalog.NewCache(store, time.Minute, nil)
			g, err := gateway.New(gateway.Options{Pool: c.pool, Catalog: cache, Upstreams: c.up, Verifier: v})
			if err != nil {
				t.Fatal(err)
			}
			h := g.Handler()
			rq := c.list
			rq.hdr = tc.hdr
			if tc.token != "" {
				rq.token = tc.token
			}
			done := make(chan string)
			go func() {
				_, body := serveRaw(h, rq)
				done <- body
			}()
			var cold string
			select {
			case cold = <-done:
			case <-time.After(20 * time.Second):
				close(store.open)
				t.Fatal("the cold first page waited for the whole catalog")
			}
			close(store.open)
			if _, err := cache.Get(context.Background(), c.ws); err != nil {
				t.Fatal(err)
			}
			_, warm := serveRaw(h, rq)
			if cold != warm {
				t.Fatalf("cold first page differs from the whole catalog's:\ncold %.300s\nwarm %.300s", cold, warm)
			}
			if !strings.Contains(cold, `"tools"`) {
				t.Fatalf("no tools: %.300s", cold)
			}
			wantProj := tc.name == "project"
			if strings.Contains(cold, "mcp_aaproj_") != wantProj {
				t.Fatalf("project-scoped server listed: %v, want %v", !wantProj, wantProj)
			}
			if tc.name == "threshold" {
				if strings.Contains(cold, `"mcp_`) || strings.Contains(cold, "nextCursor") {
					t.Fatalf("above the threshold, proxied tools listed: %.300s", cold)
				}
				return
			}
			if !strings.Contains(cold, `"nextCursor":"page-1"`) {
				t.Fatalf("no next page: %.300s", cold)
			}
		})
	}
}

// failingPartStore fails every part and pack read (the index reads well).
type failingPartStore struct{ catalog.Store }

func (s failingPartStore) GetObject(ctx context.Context, key, inm string) ([]byte, string, error) {
	if !strings.HasSuffix(key, "/index.json") {
		return nil, "", errors.New("store down")
	}
	return s.Store.GetObject(ctx, key, inm)
}

// TestColdCatalogUnavailable: when the parts cannot be read, a cold request that needs the
// whole catalog answers 503 "catalog unavailable", and a cold first page — whose own part
// reads fail too — answers an error, never a page without the tools.
func TestColdCatalogUnavailable(t *testing.T) {
	c := newChurnEnv(t, 0)
	v, err := auth.NewVerifier(context.Background(), auth.Options{Secret: benchSecret})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, body string }{
		{"call", c.call.body},
		{"first page", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`},
	} {
		g, err := gateway.New(gateway.Options{Pool: c.pool, Catalog: catalog.NewCache(failingPartStore{c.store}, time.Minute, nil),
			Upstreams: c.up, Verifier: v})
		if err != nil {
			t.Fatal(err)
		}
		rq := c.list
		rq.body = tc.body
		st, body := serveRaw(g.Handler(), rq)
		if tc.name == "call" && (st != http.StatusServiceUnavailable || !strings.Contains(body, "catalog unavailable")) {
			t.Errorf("%s: %d %s", tc.name, st, body)
		}
		if tc.name == "first page" && (!strings.Contains(body, `"error"`) || strings.Contains(body, `"tools"`)) {
			t.Errorf("%s: %d %s", tc.name, st, body)
		}
	}
}
