package db_test

import (
	"encoding/json"
	"testing"

	"github.com/agentpack/gateway/shared/apperr"
	"github.com/agentpack/gateway/shared/db"
	"github.com/agentpack/gateway/shared/dbtest"
)

const (
	wsPins      = "dddddddd-0000-4000-8000-000000000004"
	unknownUUID = "eeeeeeee-0000-4000-8000-00000000000e"
)

// TestChatPins walks the pin queries: create, get, list (oldest first), the conflict and
// reference errors, pinned connections, delete and its NOT_FOUND.
func TestChatPins(t *testing.T) {
	t.Parallel()
	pool, _ := dbtest.Fresh(t)
	ctx := t.Context()
	ws := dbtest.Workspace(t, pool, dbtest.WorkspaceOpts{ID: wsPins})
	chat := dbtest.Chat(t, pool, dbtest.ChatOpts{WorkspaceID: ws, Title: "pins"})
	global := dbtest.Connection(t, pool, dbtest.ConnectionOpts{Name: "Global", URL: "http://g"})
	local := dbtest.Connection(t, pool, dbtest.ConnectionOpts{Name: "Local", URL: "http://l", Disabled: true, WorkspaceID: &ws})

	if l, err := db.ChatPinList(ctx, pool, chat.ID); err != nil || l == nil || len(l) != 0 {
		t.Fatalf("list without pins = %#v, %v; want an empty non-nil list", l, err)
	}
	if l, err := db.ChatPinList(ctx, pool, "not-a-uuid"); err != nil || l == nil || len(l) != 0 {
		t.Fatalf("list of a malformed id = %#v, %v; want an empty non-nil list", l, err)
	}

	id1, err := db.ChatPinCreate(ctx, pool, chat.ID, local.ID, "alice")
	if err != nil {
		t.Fatal(err)
	}
	id2, err := db.ChatPinCreate(ctx, pool, chat.ID, global.ID, "bob")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.ChatPinCreate(ctx, pool, chat.ID, local.ID, "alice"); apperr.CodeOf(err) != apperr.Conflict {
		t.Fatalf("second pin of one connection: %v, want CONFLICT", err)
	}
	if _, err := db.ChatPinCreate(ctx, pool, chat.ID, unknownUUID, "alice"); apperr.CodeOf(err) != apperr.InvalidReference {
		t.Fatalf("pin of an unknown connection: %v, want INVALID_REFERENCE", err)
	}

	p, err := db.ChatPinGet(ctx, pool, chat.ID, id1)
	if err != nil {
		t.Fatal(err)
	}
	if p.ConnectionName != "Local" || p.ConnectionWorkspaceID == nil || *p.ConnectionWorkspaceID != wsPins ||
		p.ConnectionProjectID != nil || p.Enabled || p.CreatedBy != "alice" || p.ChatWorkspaceID != wsPins || p.CreatedAt.IsZero() {
		t.Fatalf("pin = %+v", p)
	}
	for _, ids := range [][2]string{{chat.ID, unknownUUID}, {unknownUUID, id1}, {"x", id1}, {chat.ID, "x"}} {
		if _, err := db.ChatPinGet(ctx, pool, ids[0], ids[1]); apperr.CodeOf(err) != apperr.NotFound {
			t.Errorf("get %v: %v, want NOT_FOUND", ids, err)
		}
	}

	l, err := db.ChatPinList(ctx, pool, chat.ID)
	if err != nil || len(l) != 2 || l[0].ID != id1 || l[1].ID != id2 || l[1].ConnectionWorkspaceID != nil {
		t.Fatalf("list = %+v, %v; want the two pins oldest first", l, err)
	}
	pc, err := db.ChatPinnedConnections(ctx, pool, chat.ID)
	if err != nil || len(pc) != 2 || pc[0].ID != local.ID || pc[0].Enabled || pc[1].ID != global.ID || !pc[1].Enabled || pc[1].WorkspaceID != nil {
		t.Fatalf("pinned connections = %+v, %v", pc, err)
	}
	if _, err := db.ChatPinnedConnections(ctx, pool, "x"); apperr.CodeOf(err) != apperr.Validation {
		t.Fatalf("pinned connections of a malformed id: %v, want VALIDATION_ERROR", err)
	}

	if err := db.ChatPinDelete(ctx, pool, chat.ID, id1); err != nil {
		t.Fatal(err)
	}
	for _, ids := range [][2]string{{chat.ID, id1}, {unknownUUID, id2}, {chat.ID, "x"}} {
		if err := db.ChatPinDelete(ctx, pool, ids[0], ids[1]); apperr.CodeOf(err) != apperr.NotFound {
			t.Errorf("delete %v: %v, want NOT_FOUND", ids, err)
		}
	}
	if l, _ := db.ChatPinList(ctx, pool, chat.ID); len(l) != 1 || l[0].ID != id2 {
		t.Fatalf("list after delete = %+v", l)
	}
}

// TestConnectionNameByExposedTool maps an exposed tool name to its connection's name;
// an unknown name is NOT_FOUND.
func TestConnectionNameByExposedTool(t *testing.T) {
	t.Parallel()
	pool := dbtest.Tx(t)
	ctx := t.Context()
	c := dbtest.Connection(t, pool, dbtest.ConnectionOpts{Name: "Echoer", URL: "http://e"})
	defs := []db.ToolDef{{Name: "echo", InputSchema: json.RawMessage(`{"type":"object"}`)}}
	if _, err := db.ConnectionToolsSync(ctx, pool, c.ID, c.Handle, defs, false); err != nil {
		t.Fatal(err)
	}
	if n, err := db.ConnectionNameByExposedTool(ctx, pool, "mcp_"+c.Handle+"_echo"); err != nil || n != "Echoer" {
		t.Fatalf("name = %q, %v; want Echoer", n, err)
	}
	if _, err := db.ConnectionNameByExposedTool(ctx, pool, "mcp_nope_nope"); apperr.CodeOf(err) != apperr.NotFound {
		t.Fatalf("unknown tool: %v, want NOT_FOUND", err)
	}
}
