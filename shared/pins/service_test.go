package pins_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/agentpack/gateway/shared/apperr"
	"github.com/agentpack/gateway/shared/auth"
	"github.com/agentpack/gateway/shared/catalog"
	"github.com/agentpack/gateway/shared/db"
	"github.com/agentpack/gateway/shared/dbtest"
	"github.com/agentpack/gateway/shared/pins"
	"github.com/google/uuid"
)

type world struct {
	pool                          *db.Pool
	svc                           *pins.Service
	wsA, wsB, projA, chatA, chatB string
	connA, connOff, connProj      string
	connGlob, connB               string
}

func setup(t *testing.T) *world {
	t.Helper()
	pool, _ := dbtest.Fresh(t)
	ctx := context.Background()
	w := &world{pool: pool, svc: &pins.Service{Pool: pool}}
	w.wsA, w.wsB, w.projA = uuid.NewString(), uuid.NewString(), uuid.NewString()
	w.chatA, w.chatB = uuid.NewString(), uuid.NewString()
	dbtest.Workspace(t, pool, dbtest.WorkspaceOpts{ID: w.wsA, Name: "A"})
	dbtest.Workspace(t, pool, dbtest.WorkspaceOpts{ID: w.wsB, Name: "B"})
	for _, err := range []error{
		db.ProjectEnsure(ctx, pool, w.projA, w.wsA, "p"),
		db.ChatEnsure(ctx, pool, w.chatA, w.wsA, ""),
		db.ChatEnsure(ctx, pool, w.chatB, w.wsB, ""),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	mk := func(name string, enabled bool, ws, proj *string) string {
		c := dbtest.Connection(t, pool, dbtest.ConnectionOpts{Name: name, Disabled: !enabled, WorkspaceID: ws, ProjectID: proj})
		if _, err := db.ConnectionToolsSync(ctx, pool, c.ID, c.Handle, []db.ToolDef{
			{Name: "echo", Description: name + " echo", InputSchema: json.RawMessage(`{"type":"object"}`)},
		}, false); err != nil {
			t.Fatal(err)
		}
		return c.ID
	}
	w.connA = mk("Alpha", true, &w.wsA, nil)
	w.connOff = mk("Off", false, &w.wsA, nil)
	w.connProj = mk("Proj", true, &w.wsA, &w.projA)
	w.connGlob = mk("Global", true, nil, nil)
	w.connB = mk("Bravo", true, &w.wsB, nil)
	return w
}

var (
	adminA = func(w *world) *auth.Principal {
		return &auth.Principal{Subject: "alice", Role: auth.RoleAdmin, Workspaces: []string{w.wsA}}
	}
	memberA = func(w *world) *auth.Principal {
		return &auth.Principal{Subject: "mallory", Role: auth.RoleMember, Workspaces: []string{w.wsA}}
	}
	adminAB = func(w *world) *auth.Principal {
		return &auth.Principal{Subject: "ab", Role: auth.RoleAdmin, Workspaces: []string{w.wsA, w.wsB}}
	}
)

func wantCode(t *testing.T, err error, code apperr.Code) {
	t.Helper()
	if apperr.CodeOf(err) != code {
		t.Fatalf("err = %v, want %s", err, code)
	}
}

func events(t *testing.T, pool *db.Pool, action string) int {
	t.Helper()
	var n int
	if err := pool.QueryRow(context.Background(), `SELECT count(*) FROM event_log WHERE action = $1 AND entity_type = 'mcp_connection'`, action).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func pinCount(t *testing.T, pool *db.Pool) int {
	t.Helper()
	var n int
	if err := pool.QueryRow(context.Background(), `SELECT count(*) FROM chat_mcp_pins`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestAddRefusals(t *testing.T) {
	t.Parallel()
	w := setup(t)
	ctx := t.Context()
	tests := []struct {
		name string
		p    *auth.Principal
		chat string
		conn string
		code apperr.Code
	}{
		{"member cannot pin", memberA(w), w.chatA, w.connA, apperr.Forbidden},
		{"unknown chat", adminA(w), uuid.NewString(), w.connA, apperr.NotFound},
		{"malformed chat", adminA(w), "nope", w.connA, apperr.NotFound},
		{"chat of another workspace", adminA(w), w.chatB, w.connB, apperr.NotFound},
		{"malformed connection id", adminA(w), w.chatA, "not-a-uuid", apperr.Validation},
		{"unknown connection", adminA(w), w.chatA, uuid.NewString(), apperr.NotFound},
		{"connection of a workspace the caller cannot see", adminA(w), w.chatA, w.connB, apperr.NotFound},
		{"connection of another workspace the caller can see", adminAB(w), w.chatA, w.connB, apperr.InvalidReference},
		{"project-scoped connection", adminA(w), w.chatA, w.connProj, apperr.InvalidReference},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := w.svc.Add(ctx, tc.p, tc.chat, tc.conn)
			wantCode(t, err, tc.code)
		})
	}
	if n := pinCount(t, w.pool); n != 0 {
		t.Fatalf("refused pins wrote %d rows", n)
	}
	if n := events(t, w.pool, pins.ActionPinned); n != 0 {
		t.Fatalf("refused pins logged %d events", n)
	}
}

func TestPinLifecycle(t *testing.T) {
	t.Parallel()
	w := setup(t)
	ctx := t.Context()
	admin := adminA(w)
	var ids []string
	for _, c := range []string{w.connA, w.connGlob, w.connOff} {
		p, err := w.svc.Add(ctx, admin, w.chatA, c)
		if err != nil {
			t.Fatalf("add %s: %v", c, err)
		}
		if p.ChatID != w.chatA || p.ConnectionID != c || p.CreatedBy != "alice" {
			t.Fatalf("pin = %+v", p)
		}
		ids = append(ids, p.ID)
	}
	_, err := w.svc.Add(ctx, admin, w.chatA, w.connA)
	wantCode(t, err, apperr.Conflict)

	list, err := w.svc.List(ctx, memberA(w), w.chatA) // members may read
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]pins.PinView{}
	for _, p := range list {
		got[p.ConnectionID] = p
	}
	if len(list) != 3 || !got[w.connA].Usable || !got[w.connGlob].Usable || got[w.connOff].Usable ||
		got[w.connGlob].Scope != "global" || got[w.connOff].ConnectionName != "Off" {
		t.Fatalf("list = %+v", list)
	}
	_, err = w.svc.List(ctx, adminA(w), w.chatB)
	wantCode(t, err, apperr.NotFound)
	if n := events(t, w.pool, pins.ActionPinned); n != 3 {
		t.Fatalf("pinned events = %d, want 3", n)
	}

	// Remove: member refused, unknown / foreign / malformed pin ids are 404.
	_, err = w.svc.Remove(ctx, memberA(w), w.chatA, ids[0])
	wantCode(t, err, apperr.Forbidden)
	_, err = w.svc.Remove(ctx, admin, w.chatA, uuid.NewString())
	wantCode(t, err, apperr.NotFound)
	_, err = w.svc.Remove(ctx, admin, w.chatA, "x")
	wantCode(t, err, apperr.NotFound)
	pb, err := w.svc.Add(ctx, adminAB(w), w.chatB, w.connB)
	if err != nil {
		t.Fatal(err)
	}
	_, err = w.svc.Remove(ctx, adminAB(w), w.chatA, pb.ID) // pin of chat B through chat A
	wantCode(t, err, apperr.NotFound)

	removed, err := w.svc.Remove(ctx, admin, w.chatA, ids[0])
	if err != nil || removed.ConnectionID != w.connA {
		t.Fatalf("remove = %+v, %v", removed, err)
	}
	_, err = w.svc.Remove(ctx, admin, w.chatA, ids[0])
	wantCode(t, err, apperr.NotFound)
	if n := events(t, w.pool, pins.ActionUnpinned); n != 1 {
		t.Fatalf("unpinned events = %d, want 1", n)
	}
	if n := pinCount(t, w.pool); n != 3 { // 2 left on A + 1 on B: hard delete
		t.Fatalf("pins = %d, want 3", n)
	}
}

func snapshot(t *testing.T, pool *db.Pool, ws string) *catalog.Snapshot {
	t.Helper()
	doc, err := catalog.Build(t.Context(), pool, ws)
	if err != nil {
		t.Fatal(err)
	}
	return catalog.NewSnapshot(doc, "test")
}

func TestResolveChatAndSources(t *testing.T) {
	t.Parallel()
	w := setup(t)
	ctx := t.Context()
	snap := snapshot(t, w.pool, w.wsA)
	chat := &db.Chat{ID: w.chatA, WorkspaceID: w.wsA}
	allowedNames := func() []string {
		res, err := pins.ResolveChat(ctx, w.pool, nil, snap, chat)
		if err != nil {
			t.Fatal(err)
		}
		ts := pins.ProxiedTools(snap, chat, res)
		var names []string
		for _, c := range ts.Connections {
			names = append(names, c.Name)
		}
		slices.Sort(names)
		return names
	}
	// No pins: workspace default (globals included, project-scoped and disabled excluded).
	if got := allowedNames(); !slices.Equal(got, []string{"Alpha", "Global"}) {
		t.Fatalf("no pins: %v", got)
	}
	// Only a disabled pin: fallback to the default.
	if _, err := w.svc.Add(ctx, adminA(w), w.chatA, w.connOff); err != nil {
		t.Fatal(err)
	}
	res, _ := pins.ResolveChat(ctx, w.pool, nil, snap, chat)
	if !res.FellBack {
		t.Fatal("want fallback")
	}
	// Pin Alpha: the unpinned global drops out, Alpha stays.
	if _, err := w.svc.Add(ctx, adminA(w), w.chatA, w.connA); err != nil {
		t.Fatal(err)
	}
	if got := allowedNames(); !slices.Equal(got, []string{"Alpha"}) {
		t.Fatalf("pinned Alpha: %v", got)
	}

	// resolveMcpSourceName: exposed tool name → connection name.
	var alphaTool string
	for _, c := range snap.Doc.Connections {
		if c.Name == "Alpha" {
			alphaTool = c.Tools[0].ExposedName
		}
	}
	if n, ok := pins.ResolveMcpSourceName(snap, alphaTool); !ok || n != "Alpha" {
		t.Fatalf("SourceName = %q %v", n, ok)
	}
	if _, ok := pins.ResolveMcpSourceName(snap, "agentpack_catalog_list"); ok {
		t.Fatal("a built-in has no MCP source")
	}
	if _, ok := pins.ResolveMcpSourceName(nil, alphaTool); ok {
		t.Fatal("nil snapshot")
	}
	if got := pins.SourceNames(snap, []string{alphaTool, "agentpack_x", alphaTool}); !slices.Equal(got, []string{"Alpha"}) {
		t.Fatalf("SourceNames = %v", got)
	}
	if n, err := pins.SourceNameDB(ctx, w.pool, alphaTool); err != nil || n != "Alpha" {
		t.Fatalf("SourceNameDB = %q %v", n, err)
	}
	_, err := pins.SourceNameDB(ctx, w.pool, "mcp_nope_nope")
	wantCode(t, err, apperr.NotFound)
}

func TestUnavailable(t *testing.T) {
	t.Parallel()
	w := setup(t)
	w.pool.Close()
	_, err := w.svc.List(context.Background(), adminA(w), w.chatA)
	wantCode(t, err, apperr.Unavailable)
	_, err = pins.PinList(context.Background(), w.pool, w.chatA)
	wantCode(t, err, apperr.Unavailable)
	_, err = pins.PinnedConnections(context.Background(), w.pool, w.chatA)
	wantCode(t, err, apperr.Unavailable)
}

// TestServiceErrorsNameTheOperation: a service error says what failed, on which ids, and
// keeps its code (and so its HTTP status).
func TestServiceErrorsNameTheOperation(t *testing.T) {
	t.Parallel()
	w := setup(t)
	ctx := t.Context()
	pin := uuid.NewString()
	_, err := w.svc.Remove(ctx, adminA(w), w.chatA, pin)
	wantCode(t, err, apperr.NotFound)
	if want := "pins: remove pin " + pin + " of chat " + w.chatA + ": "; !strings.HasPrefix(err.Error(), want) {
		t.Errorf("Remove error %q, want prefix %q", err, want)
	}
	if apperr.Public(err).Message != "no such pin" {
		t.Errorf("client message %q, want %q", apperr.Public(err).Message, "no such pin")
	}
	if _, err := w.svc.Add(ctx, adminA(w), w.chatA, w.connA); err != nil {
		t.Fatal(err)
	}
	_, err = w.svc.Add(ctx, adminA(w), w.chatA, w.connA)
	wantCode(t, err, apperr.Conflict)
	if want := "pins: pin " + w.connA + " to chat " + w.chatA + ": "; !strings.HasPrefix(err.Error(), want) {
		t.Errorf("Add error %q, want prefix %q", err, want)
	}
	_, err = w.svc.CreateChat(ctx, memberA(w), w.wsA, "t")
	wantCode(t, err, apperr.Forbidden)
	if want := `pins: create chat in workspace "` + w.wsA + `": `; !strings.HasPrefix(err.Error(), want) {
		t.Errorf("CreateChat error %q, want prefix %q", err, want)
	}
}
