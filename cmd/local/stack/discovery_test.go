package stack_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/agentpack/gateway/cmd/local/stacktest"
	"github.com/agentpack/gateway/shared/auth"
	"github.com/agentpack/gateway/shared/catalog"
	"github.com/agentpack/gateway/shared/connections"
	"github.com/agentpack/gateway/shared/db"
	"github.com/agentpack/gateway/shared/demoupstream"
	"github.com/agentpack/gateway/shared/testpeer"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Progressive discovery at 20,000 tools, end to end (docs/USING.md "Progressive discovery",
// docs/CATALOG.md): a workspace of 1,000 connections × 20 tools on a loopback stub
// upstream, one of whose servers has the only weather tool. A client lists tools (the
// built-ins, the search among them), searches in natural language, and calls the first
// hit by name: two tools/call, the last one answered by the upstream.

const (
	discoveryConns    = 1000
	discoveryPerConn  = 20
	discoveryQuery    = "what is the weather forecast for a city"
	discoveryCity     = "Lisbon"
	discoveryForecast = "Forecast for Lisbon: sunny, 21 °C"
)

// genericTools are the 20 tools of every stub server but the weather one (echo and
// tool_1 … tool_19, as cmd/bench's scale stub serves them).
var genericTools = func() []db.ToolDef {
	schema := json.RawMessage(`{"type":"object","properties":{"id":{"type":"string","description":"resource id"},` +
		`"limit":{"type":"integer","description":"at most this many"},"query":{"type":"string","description":"a filter"}},"required":["id"]}`)
	defs := []db.ToolDef{{Name: "echo", Description: "Echoes back the input message.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"message":{"type":"string"}},"required":["message"]}`)}}
	for i := 1; i < discoveryPerConn; i++ {
		name := fmt.Sprintf("tool_%d", i)
		defs = append(defs, db.ToolDef{Name: name, Title: "Tool " + name, InputSchema: schema,
			Description: "Does thing number " + name + " to the resource identified by id, returning the updated resource as JSON."})
	}
	return defs
}()

// discoveryStub starts the stub upstream on loopback: /weather is a server whose tools
// are forecast and tool_1 … tool_19; every other path is a server of genericTools. It
// returns the base URL.
func discoveryStub(t *testing.T) string {
	t.Helper()
	add := func(s *mcp.Server, defs []db.ToolDef) {
		for _, d := range defs {
			s.AddTool(&mcp.Tool{Name: d.Name, Title: d.Title, Description: d.Description, InputSchema: d.InputSchema},
				func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
					return demoupstream.TextResult(d.Name), nil
				})
		}
	}
	generic := mcp.NewServer(&mcp.Implementation{Name: "scale-stub", Version: "1"}, nil)
	add(generic, genericTools)
	weather := mcp.NewServer(&mcp.Implementation{Name: "weather-stub", Version: "1"}, nil)
	type forecastIn struct {
		City string `json:"city" jsonschema:"the city's name"`
	}
	mcp.AddTool(weather, &mcp.Tool{Name: "forecast", Title: "Weather forecast",
		Description: "Returns tomorrow's weather forecast for a city."},
		func(_ context.Context, _ *mcp.CallToolRequest, in forecastIn) (*mcp.CallToolResult, any, error) {
			return demoupstream.TextResult("Forecast for " + in.City + ": sunny, 21 °C"), nil, nil
		})
	add(weather, genericTools[1:])
	mux := http.NewServeMux()
	for path, s := range map[string]*mcp.Server{"/": generic, "/weather": weather} {
		h, err := demoupstream.NewHandler(s, demoupstream.ModeStreamable)
		if err != nil {
			t.Fatal(err)
		}
		mux.Handle(path, h)
	}
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL
}

// discoveryWorkspace fills a fresh workspace with discoveryConns-1 connections to the
// stub's generic servers (rows and tools written through the db package, four
// transactions in parallel, then one full catalog.Rebuild: installing them one by one
// through the service would cost a connect, a listing and a publish each), then installs the
// weather server through POST /api/mcp-connections (a real connect and listing, published
// incrementally beside the 999). It returns the workspace, an admin token and the forecast
// tool's exposed name.
func discoveryWorkspace(t *testing.T, env *stacktest.Env, stub string) (ws, token, forecast string) {
	t.Helper()
	ctx := t.Context()
	ws, _, _ = env.Workspace(t, "Twenty thousand tools")
	token = stacktest.Token(t, "alice", auth.RoleAdmin, ws)
	const workers = 4
	var wg sync.WaitGroup
	errs := make([]error, workers)
	for w := range workers {
		wg.Go(func() {
			errs[w] = db.InTx(ctx, env.Pool, func(tx db.Tx) error {
				for i := w; i < discoveryConns-1; i += workers {
					c, err := db.ConnectionCreate(ctx, tx, &db.ConnectionNew{Name: fmt.Sprintf("Server %d", i),
						URL: fmt.Sprintf("%s/s/%d", stub, i), TransportType: "streamable-http", Source: "manual",
						Enabled: true, WorkspaceID: &ws, CreatedBy: "alice"})
					if err != nil {
						return err
					}
					if _, err := db.ConnectionToolsSync(ctx, tx, c.ID, c.Handle, genericTools, false); err != nil {
						return err
					}
				}
				return nil
			})
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	if err := catalog.Rebuild(ctx, env.Pool, env.Deps.Store, []string{ws}); err != nil {
		t.Fatal(err)
	}
	out := env.Connection(t, stacktest.Admin("alice", ws), connections.CreateInput{Name: "Weather", URL: stub + "/weather",
		TransportType: "streamable-http", WorkspaceID: &ws})
	if out.Connect == nil || !out.Connect.OK {
		t.Fatalf("install the weather server: connect %+v", out.Connect)
	}
	created := out.Connection
	doc, _, err := catalog.ReadDocument(ctx, env.Deps.Store, ws)
	if err != nil {
		t.Fatal(err)
	}
	tools := 0
	for _, c := range doc.Connections {
		tools += len(c.Tools)
	}
	if len(doc.Connections) != discoveryConns || tools != discoveryConns*discoveryPerConn {
		t.Fatalf("catalog: %d connections, %d tools; want %d, %d", len(doc.Connections), tools, discoveryConns, discoveryConns*discoveryPerConn)
	}
	return ws, token, "mcp_" + created.Handle + "_forecast"
}

// searchHits is the structured answer of agentpack_tools_search (the built-ins' envelope).
type searchHits struct {
	OK   bool `json:"ok"`
	Data struct {
		Tools []searchHit
		Total int
	} `json:"data"`
}

// searchHit is one hit of an agentpack_tools_search answer.
type searchHit struct {
	Name, Kind, Source, Connection string
	Matched                        []string
	InputSchema                    map[string]any
}

// discoverySession opens a go-sdk client session on ws's aggregate endpoint as token's
// bearer (its context ends after a minute, scaled) and checks its tools/list above the
// discovery threshold: the built-ins with agentpack_tools_search and agentpack_tool_call,
// no proxied tool, one page.
func discoverySession(t *testing.T, env *stacktest.Env, ws, token string) (context.Context, *mcp.ClientSession) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), testpeer.Scaled(60*time.Second))
	t.Cleanup(cancel)
	s := env.MCP(t, "/mcp/"+ws, token, "", nil)
	listed, err := s.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, tl := range listed.Tools {
		names[tl.Name] = true
		if strings.HasPrefix(tl.Name, "mcp_") {
			t.Errorf("tools/list above the threshold lists proxied tool %s", tl.Name)
		}
	}
	if !names["agentpack_tools_search"] || !names["agentpack_tool_call"] || listed.NextCursor != "" {
		t.Fatalf("tools/list: %d tools %v, next cursor %q", len(listed.Tools), names, listed.NextCursor)
	}
	return ctx, s
}

// inspectorResult is a tools/call result as the MCP Inspector CLI prints it on stdout.
type inspectorResult struct {
	Content []struct {
		Type, Text string
	}
	StructuredContent json.RawMessage
	IsError           bool
}

// inspectorToolCall runs the MCP Inspector CLI (inspectorCLI; skipped without it) once
// against ws's aggregate endpoint as token's bearer: `--method tools/call` with args
// (--tool-name, --tool-arg …), in a fresh home without this machine's inspector config,
// killed with its process group at the deadline. It fails the test when the CLI fails,
// its stdout is not a result, or the result is an error; it returns the result and stdout.
func inspectorToolCall(t *testing.T, env *stacktest.Env, ws, token string, args ...string) (inspectorResult, []byte) {
	t.Helper()
	node, cli := inspectorCLI(t)
	ctx, cancel := context.WithTimeout(t.Context(), testpeer.Scaled(120*time.Second))
	defer cancel()
	cmd := exec.CommandContext(ctx, node, append([]string{cli, "--cli", env.URL + "/mcp/" + ws, "--transport", "http",
		"--header", "Authorization: Bearer " + token, "--method", "tools/call"}, args...)...)
	cmd.Dir = t.TempDir() // no inspector config of this machine's user
	cmd.Env = append(os.Environ(), "HOME="+cmd.Dir, "XDG_CONFIG_HOME="+cmd.Dir)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("inspector %v: %v\nstdout:\n%s\nstderr:\n%s", args, err, out, stderr.String())
	}
	var res inspectorResult
	if err := json.Unmarshal(out, &res); err != nil || res.IsError {
		t.Fatalf("inspector %v: %v\n%s", args, err, out)
	}
	return res, out
}

// checkForecastAudit fails unless the newest proxied audit row of ws is one call of the
// forecast tool.
func checkForecastAudit(t *testing.T, env *stacktest.Env, ws, forecast string) {
	t.Helper()
	env.FlushAudit(t)
	rows, err := db.AuditEventList(t.Context(), env.Pool, ws, 10)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if r.Kind == "proxied" {
			if r.Tool != forecast || r.ConnectionID == nil {
				t.Errorf("newest proxied audit row: %+v; want a call of %s", r, forecast)
			}
			return
		}
	}
	t.Errorf("no proxied audit row among %+v", rows)
}

// TestDiscoveryTwoCalls20000 ("Show an SDK client and the MCP Inspector finding
// and calling one tool among 20,000 in two calls"): on the whole local stack, with the
// workspace of discoveryWorkspace (1,000 connections × 20 tools, above the default
// discovery threshold of 200):
//   - the official go-sdk client's tools/list shows the built-ins with
//     agentpack_tools_search and agentpack_tool_call and no proxied tool; then exactly two
//     tools/call: the search with a natural-language query, whose first hit is the forecast
//     tool (with its input schema), and agentpack_tool_call with that name, answered by the
//     stub's weather server; the call has its audit row;
//   - the MCP Inspector CLI (@modelcontextprotocol/inspector, pinned in test/npm, on its
//     Node 22) makes the same two calls (--method tools/call, --tool-arg, the arguments
//     object as a JSON value) and its stdout carries the same hit and the same answer.
//
// The Inspector part needs the npm peers (skipped without, failed with REQUIRE_PEERS=1).
func TestDiscoveryTwoCalls20000(t *testing.T) {
	t.Parallel()
	stub := discoveryStub(t)
	env := stacktest.New(t, nil)
	ws, token, forecast := discoveryWorkspace(t, env, stub)

	t.Run("go-sdk", func(t *testing.T) {
		ctx, s := discoverySession(t, env, ws, token)

		// Call 1: the search.
		res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "agentpack_tools_search",
			Arguments: map[string]any{"query": discoveryQuery}})
		if err != nil || res.IsError {
			t.Fatalf("search: %v %+v", err, res)
		}
		var hits searchHits
		b, _ := json.Marshal(res.StructuredContent)
		if err := json.Unmarshal(b, &hits); err != nil || !hits.OK || len(hits.Data.Tools) == 0 {
			t.Fatalf("search answer: %v %s", err, b)
		}
		first := hits.Data.Tools[0]
		if first.Name != forecast || first.Kind != "proxied" || first.Source != "Weather" || first.InputSchema["type"] != "object" {
			t.Fatalf("first hit: %+v; want %s (proxied, from Weather, with its schema)", first, forecast)
		}

		// Call 2: by name, with the hit's name.
		res, err = s.CallTool(ctx, &mcp.CallToolParams{Name: "agentpack_tool_call",
			Arguments: map[string]any{"name": first.Name, "arguments": map[string]any{"city": discoveryCity}}})
		if err != nil || res.IsError || len(res.Content) != 1 {
			t.Fatalf("call by name: %v %+v", err, res)
		}
		if tc, ok := res.Content[0].(*mcp.TextContent); !ok || tc.Text != discoveryForecast {
			t.Fatalf("call by name answered %#v; want the upstream's %q", res.Content[0], discoveryForecast)
		}
		checkForecastAudit(t, env, ws, forecast)
	})

	t.Run("inspector", func(t *testing.T) {
		// Call 1: the search.
		sr, out := inspectorToolCall(t, env, ws, token, "--tool-name", "agentpack_tools_search", "--tool-arg", "query="+discoveryQuery)
		var hits searchHits
		if err := json.Unmarshal(sr.StructuredContent, &hits); err != nil || len(hits.Data.Tools) == 0 || hits.Data.Tools[0].Name != forecast {
			t.Fatalf("search: first hit is not %s: %v\n%s", forecast, err, out)
		}

		// Call 2: by name; the arguments object is one JSON value.
		cr, out := inspectorToolCall(t, env, ws, token, "--tool-name", "agentpack_tool_call", "--tool-arg", "name="+hits.Data.Tools[0].Name,
			"--tool-arg", `arguments={"city":"`+discoveryCity+`"}`)
		if len(cr.Content) != 1 || cr.Content[0].Text != discoveryForecast {
			t.Fatalf("call by name: want the upstream's %q\n%s", discoveryForecast, out)
		}
		checkForecastAudit(t, env, ws, forecast)
	})
}
