package catalog_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentpack/gateway/shared/catalog"
)

// heldKey marks a context whose part reads a gatedStore holds (the background read of a
// lazy snapshot keeps the values of the context it was started with).
type heldKey struct{}

// gatedStore holds the part and pack reads of held contexts until open is closed, fails
// them while fail is set, and counts the others.
type gatedStore struct {
	catalog.Store
	open  chan struct{}
	fail  atomic.Bool
	parts atomic.Int64 // reads of contexts not held
}

func (s *gatedStore) GetObject(ctx context.Context, key, inm string) ([]byte, string, error) {
	if !strings.HasSuffix(key, "/index.json") {
		if ctx.Value(heldKey{}) != nil {
			<-s.open
			if s.fail.Load() {
				return nil, "", errors.New("store down")
			}
		} else {
			s.parts.Add(1)
		}
	}
	return s.Store.GetObject(ctx, key, inm)
}

// trickyDoc has handles whose exposed names do not sort as the handles do ("a-b" < "a_" <
// "ab"), a project-scoped connection, a tool that is not served (no "type":"object") and
// a connection with no tools.
func trickyDoc(ws string) *catalog.Document {
	doc := &catalog.Document{Version: catalog.SchemaVersion, WorkspaceID: ws, GeneratedAt: time.Now().UTC()}
	obj := json.RawMessage(`{"type":"object"}`)
	for i, h := range []string{"a", "a-b", "ab", "a0", "b", "zz", "proj", "empty"} {
		c := catalog.Connection{ID: "c" + string(rune('a'+i)), Name: h, Handle: h, Scope: "workspace", Source: "manual",
			URL: "http://127.0.0.1:9/" + h, TransportType: "streamable-http", Tools: []catalog.Tool{}}
		if h == "proj" {
			c.Scope, c.ProjectID = "project", "p1"
		}
		if h != "empty" {
			for _, tn := range []string{"x", "a", "m_2", "Z", "tool-9"} {
				c.Tools = append(c.Tools, catalog.Tool{ExposedName: "mcp_" + h + "_" + tn, UpstreamName: tn, InputSchema: obj})
			}
		}
		if h == "ab" {
			c.Tools = append(c.Tools, catalog.Tool{ExposedName: "mcp_ab_0unserved", UpstreamName: "0unserved", InputSchema: json.RawMessage(`{"properties":{}}`)})
		}
		doc.Connections = append(doc.Connections, c)
	}
	return doc
}

// TestFirstToolsMatchesDocument: for every n and visibility, FirstTools gives exactly the
// first n served visible tools of the whole document by exposed name, and its counts — in
// standalone parts and in a pack alike.
func TestFirstToolsMatchesDocument(t *testing.T) {
	t.Parallel()
	const ws = "e0000000-0000-4000-8000-0000000000e0"
	for _, packed := range []bool{false, true} {
		disk := &catalog.DiskStore{Dir: t.TempDir()}
		write := catalog.WriteDocument
		if packed {
			write = catalog.WritePacked
		}
		if _, err := write(t.Context(), disk, trickyDoc(ws)); err != nil {
			t.Fatal(err)
		}
		whole, err := catalog.Load(t.Context(), disk, ws, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, project := range []string{"", "p1"} {
			visible := func(c *catalog.Connection) bool { return c.Scope != "project" || c.ProjectID == project }
			var want []string
			all := 0
			for i := range whole.Doc.Connections {
				c := &whole.Doc.Connections[i]
				if !visible(c) {
					continue
				}
				all += len(c.Tools)
				for j := range c.Tools {
					if c.Tools[j].Served() {
						want = append(want, c.Tools[j].ExposedName)
					}
				}
			}
			slices.Sort(want)
			for _, n := range []int{0, 1, 3, 6, 11, 30, 1000} {
				s, err := catalog.LoadLazy(t.Context(), disk, ws)
				if err != nil {
					t.Fatal(err)
				}
				refs, served, gotAll, ok, err := s.FirstTools(t.Context(), n, visible)
				if err != nil || !ok {
					t.Fatalf("packed %v n %d: %v %v", packed, n, ok, err)
				}
				var got []string
				for _, r := range refs {
					got = append(got, r.Tool.ExposedName)
					if !strings.HasPrefix(r.Tool.ExposedName, "mcp_"+r.Conn.Handle+"_") {
						t.Fatalf("tool %s points at connection %s", r.Tool.ExposedName, r.Conn.Handle)
					}
				}
				if exp := want[:min(max(n, 0), len(want))]; !slices.Equal(got, exp) || served != len(want) || gotAll != all {
					t.Fatalf("packed %v project %q n %d:\n got %v (%d, %d)\nwant %v (%d, %d)", packed, project, n, got, served, gotAll, exp, len(want), all)
				}
				if err := s.Complete(t.Context()); err != nil || len(s.Doc.Connections) != len(whole.Doc.Connections) {
					t.Fatalf("complete: %v", err)
				}
			}
		}
	}
}

// TestFirstToolsReadsFewParts: the first 100 names of 200 connections × 20 tools are read
// from the few parts that hold them while the whole document is still being read; the
// snapshot then completes.
func TestFirstToolsReadsFewParts(t *testing.T) {
	t.Parallel()
	const ws = "e0000000-0000-4000-8000-0000000000e1"
	disk := &catalog.DiskStore{Dir: t.TempDir()}
	if _, err := catalog.WriteDocument(t.Context(), disk, scaleDoc(ws, 200, 20)); err != nil {
		t.Fatal(err)
	}
	gs := &gatedStore{Store: disk, open: make(chan struct{})}
	c := catalog.NewCache(gs, time.Minute, nil)
	s, err := c.GetLazy(context.WithValue(t.Context(), heldKey{}, true), ws)
	if err != nil {
		t.Fatal(err)
	}
	if !s.Pending() || s.Doc != nil || s.Head() == nil || len(s.Head().Parts) != 200 || s.Size() <= 0 {
		t.Fatalf("cold GetLazy: pending %v", s.Pending())
	}
	refs, served, all, ok, err := s.FirstTools(t.Context(), 100, func(*catalog.Connection) bool { return true })
	if err != nil || !ok || len(refs) != 100 || served != 4000 || all != 4000 {
		t.Fatalf("first tools: %d %d %v %v", len(refs), served, ok, err)
	}
	if n := gs.parts.Load(); n > 6 {
		t.Fatalf("FirstTools read %d parts for 100 names of 20-tool parts", n)
	}
	if !s.Pending() {
		t.Fatal("the background read finished while held")
	}
	close(gs.open)
	if err := s.Complete(t.Context()); err != nil || len(s.Doc.Connections) != 200 {
		t.Fatalf("complete: %v", err)
	}
	if ref, ok := s.Lookup(refs[0].Tool.ExposedName); !ok || ref.Conn.ID != refs[0].Conn.ID {
		t.Fatal("lookup after complete")
	}
	if again, err := c.Get(t.Context(), ws); err != nil || again != s {
		t.Fatalf("Get after the lazy read: %v", err)
	}
}

// TestGetLazyFailure: a background read that fails is Complete's error and Get's; the
// cache drops the snapshot, so that the next request loads again and, the store back,
// succeeds. An index written before the summaries makes FirstTools decline (ok false).
func TestGetLazyFailure(t *testing.T) {
	t.Parallel()
	const ws = "e0000000-0000-4000-8000-0000000000e2"
	disk := &catalog.DiskStore{Dir: t.TempDir()}
	if _, err := catalog.WriteDocument(t.Context(), disk, scaleDoc(ws, 3, 2)); err != nil {
		t.Fatal(err)
	}
	gs := &gatedStore{Store: disk, open: make(chan struct{})}
	gs.fail.Store(true)
	c := catalog.NewCache(gs, time.Minute, nil)
	held := context.WithValue(t.Context(), heldKey{}, true)
	s, err := c.GetLazy(held, ws)
	if err != nil {
		t.Fatal(err)
	}
	close(gs.open)
	if err := s.Complete(t.Context()); err == nil {
		t.Fatal("a failed background read completed")
	}
	if _, err := c.Get(held, ws); err == nil {
		t.Fatal("Get served a failed lazy snapshot")
	}
	gs.fail.Store(false)
	again, err := c.Get(held, ws)
	if err != nil || again == s || len(again.Doc.Connections) != 3 {
		t.Fatalf("reload after the failure: %v", err)
	}

	// An index without summaries (written before them): FirstTools declines.
	ix := again.Head()
	old := *ix
	old.Parts = slices.Clone(ix.Parts)
	for i := range old.Parts {
		p := &old.Parts[i]
		*p = catalog.PartRef{ID: p.ID, Handle: p.Handle, Hash: p.Hash, Pack: p.Pack, Off: p.Off, Len: p.Len}
	}
	putIndex(t, disk, &old)
	l, err := catalog.LoadLazy(t.Context(), disk, ws)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, _, ok, err := l.FirstTools(t.Context(), 10, func(*catalog.Connection) bool { return true }); ok || err != nil {
		t.Fatalf("FirstTools on an index without summaries: %v %v", ok, err)
	}
	if err := l.Complete(t.Context()); err != nil || len(l.Doc.Connections) != 3 {
		t.Fatalf("complete: %v", err)
	}
}
