package gateway_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/agentpack/gateway/shared/testpeer"
)

// TestNumberHeaderAnnotationNotReadvertised (MCP 2026-07-28 "Custom Headers from Tool
// Parameters", SEP-2243: x-mcp-header is forbidden on a number parameter, and a conformant
// client excludes a tool that has one): an upstream tool whose number parameter carries
// x-mcp-header is listed through the aggregate and the single-server endpoint without that
// annotation, with its string, integer and boolean annotations and every other member as
// the upstream sent them; the connection's tools view (GET …/tools, the console's
// connection detail) says what was removed.
func TestNumberHeaderAnnotationNotReadvertised(t *testing.T) {
	t.Parallel()
	up := testpeer.NewRawUpstream(t, false)
	const def = `{"name":"pay","title":"Pay","description":"pays","inputSchema":{"type":"object","properties":{` +
		`"amount":{"type":"number","x-mcp-header":"Amount","minimum":0},"region":{"type":"string","x-mcp-header":"Region"},` +
		`"count":{"type":"integer","x-mcp-header":"Count"},"dry":{"type":"boolean","x-mcp-header":"Dry"}},"required":["amount"]},` +
		`"annotations":{"readOnlyHint":false},"_meta":{"k":[1,2]}}`
	up.ToolsList = `{"tools":[` + def + `]}`
	bundle := setupWith(t, "Headers", "Pay", up.URL)
	env, ws, admin, c := bundle.env, bundle.ws, bundle.admin, bundle.conn
	var want map[string]any
	if err := json.Unmarshal([]byte(strings.Replace(def, `,"x-mcp-header":"Amount"`, "", 1)), &want); err != nil {
		t.Fatal(err)
	}
	for _, ep := range []struct{ name, path, prefix string }{
		{"aggregate", "/mcp/" + ws, "mcp_" + c.Handle + "_"},
		{"single", "/mcp/" + ws + "/servers/" + c.ID, ""},
	} {
		t.Run(ep.name, func(t *testing.T) {
			resp, body := env.RPC(t, ep.path, admin, `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`,
				map[string]string{"Mcp-Protocol-Version": "2025-11-25"})
			var got struct{ Tools []map[string]any }
			if err := json.Unmarshal(resultOf(t, resp, body), &got); err != nil {
				t.Fatal(err)
			}
			var pay map[string]any
			for _, d := range got.Tools {
				if d["name"] == ep.prefix+"pay" {
					pay = d
				}
			}
			if pay == nil {
				t.Fatalf("pay not listed: %v", got.Tools)
			}
			for _, k := range []string{"inputSchema", "title", "description", "annotations", "_meta"} {
				g, _ := json.Marshal(pay[k])
				w, _ := json.Marshal(want[k])
				if string(g) != string(w) {
					t.Errorf("%s:\n got %s\nwant %s", k, g, w)
				}
			}
		})
	}
	st, body := env.Do(t, http.MethodGet, "/api/mcp-connections/"+c.ID+"/tools", admin, nil)
	if st != http.StatusOK || !strings.Contains(string(body), `x-mcp-header removed from \"amount\" (number)`) {
		t.Errorf("tools view %d: %s", st, body)
	}
}
