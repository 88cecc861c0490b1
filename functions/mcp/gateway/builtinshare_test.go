package gateway_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/agentpack/gateway/functions/mcp/gateway"
	"github.com/agentpack/gateway/shared/auth"
	"github.com/agentpack/gateway/shared/catalog"
)

// TestBuiltinsSharedPerRoleClass: the server items of two workspaces of one role class
// hold one copy of the built-ins' tools/list bytes (the same address), a member's items
// another; each workspace's list still starts with every built-in its caller may see, and
// an item weighs its own tools' bytes, not the ≈ 49 kB of built-in definitions again.
func TestBuiltinsSharedPerRoleClass(t *testing.T) {
	e := newBenchEnv(t)
	type wsInfo struct{ ws, admin, member string }
	var wss []wsInfo
	for i := range 2 {
		ws, admin := e.workspace(t, auth.RoleAdmin)
		member, err := auth.Mint(benchSecret, auth.Principal{Subject: "m", Role: auth.RoleMember, Workspaces: []string{ws}}, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		doc := &catalog.Document{Version: catalog.SchemaVersion, WorkspaceID: ws, GeneratedAt: time.Now().UTC(),
			Connections: scaleConnections(1, 3)}
		doc.Connections[0].Handle = "srv" + string(rune('a'+i))
		for j := range doc.Connections[0].Tools {
			doc.Connections[0].Tools[j].ExposedName = "mcp_" + doc.Connections[0].Handle + "_" + doc.Connections[0].Tools[j].UpstreamName
		}
		if _, err := catalog.WriteDocument(t.Context(), e.store, doc); err != nil {
			t.Fatal(err)
		}
		if _, err := e.cache.Get(t.Context(), ws); err != nil { // complete: the lists come from the server items
			t.Fatal(err)
		}
		wss = append(wss, wsInfo{ws, admin, member})
	}
	before := e.g.CacheStats()["servers"].Bytes
	lists := map[string]string{}
	for _, w := range wss {
		for role, tok := range map[string]string{"admin": w.admin, "member": w.member} {
			rq := request{path: "/mcp/" + w.ws, token: tok, body: `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`}
			var res struct {
				Tools []struct{ Name string }
			}
			if err := json.Unmarshal(rq.check(t, e.handler), &res); err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, tl := range res.Tools {
				names = append(names, tl.Name)
			}
			if len(names) < 4 || !strings.HasPrefix(names[0], "agentpack_") || !strings.HasPrefix(names[len(names)-1], "mcp_srv") {
				t.Fatalf("%s list of %s: %v", role, w.ws, names)
			}
			lists[w.ws+role] = strings.Join(names, ",")
		}
	}
	if lists[wss[0].ws+"admin"] == lists[wss[0].ws+"member"] {
		t.Fatal("an admin and a member see the same list")
	}
	heads := gateway.ItemHeads(e.g)
	byClass := map[string]map[*byte]bool{}
	for k, p := range heads {
		if p == nil {
			t.Fatalf("item %s holds no shared head", k)
		}
		class := strings.Split(k, "|")[2]
		if byClass[class] == nil {
			byClass[class] = map[*byte]bool{}
		}
		byClass[class][p] = true
	}
	if len(heads) != 4 || len(byClass) != 2 || len(byClass["admin"]) != 1 || len(byClass["member"]) != 1 {
		t.Fatalf("heads by class: %v (%d items)", byClass, len(heads))
	}
	// Four items of a 3-tool workspace: their own bytes, not the built-ins' four times.
	st := e.g.CacheStats()["servers"]
	perItem := (int64(st.Bytes) - int64(before)) / int64(st.Entries)
	t.Logf("server item weight: %d bytes (items %d)", perItem, st.Entries)
	if perItem > 16<<10 {
		t.Fatalf("a server item of a 3-tool workspace weighs %d bytes", perItem)
	}
}
