package conformance_test

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strconv"
	"testing"
	"time"
)

// The task fixture upstream: the tools the suite's io.modelcontextprotocol/tasks scenarios
// call (SEP-2663; names, arguments and outcomes from the scenarios' "Required server
// fixtures"), with execution.taskSupport hints — go-sdk v1.8.0's Tool has no execution
// member, so this one answers raw JSON-RPC (stateless streamable HTTP, JSON bodies, at
// 2025-11-25). It runs no tasks itself: the gateway runs them (docs/TASKS.md).
//
//   - greet (no hint): "Hello, {name}!"
//   - slow_compute (optional): waits arguments.seconds, then a result; ends with the request
//   - failing_job (required): an isError result
//   - protocol_error_job (optional): a JSON-RPC error (-32603)
const taskFixtureTools = `{"tools":[
 {"name":"greet","description":"Greets by name","inputSchema":{"type":"object","properties":{"name":{"type":"string"}}}},
 {"name":"slow_compute","description":"Sleeps seconds, then answers","inputSchema":{"type":"object","properties":{"seconds":{"type":"number"},"label":{"type":"string"}}},"execution":{"taskSupport":"optional"}},
 {"name":"failing_job","description":"Always fails with a tool error","inputSchema":{"type":"object"},"execution":{"taskSupport":"required"}},
 {"name":"protocol_error_job","description":"Always fails with a protocol error","inputSchema":{"type":"object"},"execution":{"taskSupport":"optional"}}]}`

func serveTaskFixture(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	body, _ := io.ReadAll(r.Body)
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			Name      string `json:"name"`
			Arguments struct {
				Name    string  `json:"name"`
				Seconds float64 `json:"seconds"`
				Label   string  `json:"label"`
			} `json:"arguments"`
		} `json:"params"`
	}
	if json.Unmarshal(body, &msg) != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	if msg.ID == nil {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	answer := func(member, v string) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(msg.ID)+`,"`+member+`":`+v+`}`)
	}
	text := func(s string, isError bool) string {
		b, _ := json.Marshal(map[string]any{"content": []any{map[string]string{"type": "text", "text": s}}, "isError": isError})
		return string(b)
	}
	switch msg.Method {
	case "initialize":
		answer("result", `{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"task-fixture","version":"1.0.0"}}`)
	case "ping":
		answer("result", `{}`)
	case "tools/list":
		answer("result", taskFixtureTools)
	case "tools/call":
		a := msg.Params.Arguments
		switch msg.Params.Name {
		case "greet":
			answer("result", text("Hello, "+a.Name+"!", false))
		case "slow_compute":
			select {
			case <-time.After(time.Duration(min(a.Seconds, 600) * float64(time.Second))):
			case <-r.Context().Done():
				return
			}
			answer("result", text("computed "+a.Label+" in "+strconv.FormatFloat(a.Seconds, 'f', -1, 64)+" s", false))
		case "failing_job":
			answer("result", text("the job failed", true))
		case "protocol_error_job":
			answer("error", `{"code":-32603,"message":"the job crashed"}`)
		default:
			answer("error", `{"code":-32602,"message":"unknown tool"}`)
		}
	default:
		answer("error", `{"code":-32601,"message":"Method not found"}`)
	}
}

// startTaskFixture serves the task fixture on a loopback port and returns its MCP
// endpoint URL.
func startTaskFixture(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: http.HandlerFunc(serveTaskFixture), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = hs.Serve(ln) }()
	t.Cleanup(func() { _ = hs.Close() })
	return "http://" + ln.Addr().String() + "/mcp"
}
