package testpeer

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"time"
)

// RawUpstream is an MCP server of the project's own that answers with fixed JSON bytes
// instead of encoding typed values: what it sends is exactly RawToolsList and
// RawCallResult (and RawReadResult), so a test can compare what reaches an MCP client
// through the gateway with what the upstream sent, byte for byte. It speaks streamable
// HTTP (initialize at any version it is offered up to 2025-11-25; server/discover is
// refused, so clients fall back to initialize), statelessly, and answers either as a JSON
// body or, with SSE set, as an event stream framed the awkward ways real servers frame
// it: a priming event without data, a comment, CRLF line ends, and the message split over
// several data lines.
type RawUpstream struct {
	URL    string
	Server *httptest.Server

	mu        sync.Mutex
	sse       bool
	stateless bool // WithRevision20260728
	received  []RawRequest
	tasks     map[string]*rawTask // with WithTasks: the upstream's own tasks
	nextTask  int
	// VersionDelay, when set before any request, delays every tools/call answer by the
	// duration given for the request's Mcp-Protocol-Version (an upstream that is slower
	// at some protocol revisions than at others).
	VersionDelay map[string]time.Duration
	// Set before any request: ToolsList replaces RawToolsList; CallResults (result JSON)
	// and CallErrors (JSON-RPC error JSON) answer tools/call of the tools they name (after
	// arguments.delayMs; CallErrors also tasks/result of their own tasks); TaskTTL and TaskPollInterval are the ttl and pollInterval (ms)
	// of the upstream's own tasks (WithTasks; 60000 and 500 when 0); TaskTTLNull makes
	// their ttl null (an unlimited lifetime, 2025-11-25 "Tasks").
	ToolsList                 string
	CallResults, CallErrors   map[string]string
	TaskTTL, TaskPollInterval int
	TaskTTLNull               bool
	// Gate, when set before any request, holds every plain tools/call (one without a
	// "task" member) until it is closed or the client goes away: a test that needs calls to
	// be in flight at once releases them itself rather than relying on a delay outlasting
	// the machine's slowness.
	Gate chan struct{}
}

// rawTask is one of the upstream's own tasks.
type rawTask struct {
	tool   string
	status string
	done   chan struct{}
	cancel chan struct{}
}

// WithTasks makes u a task-capable upstream (MCP 2025-11-25 Tasks): it declares the tasks
// capability, and a tools/call with a "task" member answers at once with its own task
// ("up-task-N") and finishes after arguments.delayMs; tasks/get, tasks/result (which
// waits) and tasks/cancel are served. Call before any request.
func (u *RawUpstream) WithTasks() *RawUpstream {
	u.tasks = map[string]*rawTask{}
	return u
}

// WithRevision20260728 makes u an upstream of MCP 2026-07-28 only: initialize is refused
// (HTTP 400, -32022 with the supported versions), server/discover is answered, and the tool
// "needs_input" uses multi round-trip requests: without requestState it answers
// RawInputRequired (a form elicitation) when the request's _meta clientCapabilities declare
// elicitation — an isError result RawNoElicitation otherwise —, and a retry with
// requestState RawMRTRState and inputResponses {"confirm":{"action":"accept",…}} completes
// with RawMRTRResult. Call before any request.
func (u *RawUpstream) WithRevision20260728() *RawUpstream {
	u.stateless = true
	return u
}

// The bytes of the "needs_input" exchange (WithRevision20260728), spelled with spacing a
// re-encoder would change.
const (
	RawMRTRState     = "up-state:opaque/1+="
	RawInputRequired = `{"resultType": "input_required", "inputRequests": {"confirm": {"method": "elicitation/create", "params": {"mode": "form", "message": "Proceed <now>?", "requestedSchema": {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}}}}, "requestState": "` + RawMRTRState + `", "_meta": {"up": 1}}`
	RawMRTRResult    = `{"resultType": "complete", "content": [{"type": "text", "text": "confirmed & done"}], "_meta": {"round": 2}}`
	RawNoElicitation = `{"resultType": "complete", "content": [{"type": "text", "text": "the client declared no elicitation capability"}], "isError": true}`
)

// RawMRTRToolsList is the tools/list result of an upstream WithRevision20260728.
const RawMRTRToolsList = `{"resultType":"complete","tools":[{"name":"needs_input","description":"asks the client to confirm","inputSchema":{"type":"object","properties":{"q":{"type":"string"}}}},{"name":"plain","inputSchema":{"type":"object"}}],"ttlMs":0,"cacheScope":"private"}`

// RawURLElicitationError is the error object RawUpstream (of 2025-11-25) answers a
// tools/call whose arguments hold "elicit": true with: -32042, URL elicitation required.
const RawURLElicitationError = `{"code":-32042,"message":"URL elicitation required","data":{"elicitations":[{"mode":"url","message":"Link your account","url":"https://up.example/connect?x=1","elicitationId":"e-1"}]}}`

// RawMissingURI is the resource URI RawUpstream answers resources/read for with -32002
// (resource not found as revisions before 2026-07-28 spell it).
const RawMissingURI = "file:///missing.txt"

// RawRequest is one JSON-RPC message the RawUpstream received.
type RawRequest struct {
	Method string
	Params json.RawMessage
	Header http.Header
}

// RawToolsList is the tools/list result RawUpstream sends: definitions with every member
// protocol 2025-11-25 defines (title, icons, annotations with a member no revision
// defines, outputSchema, execution, _meta incl. an MCP Apps ui.resourceUri) and members
// no revision defines, with spacing and member order a re-encoder would change.
const RawToolsList = `{"tools": [
  {"name": "report", "title": "Quarterly report", "description": "Builds a <b>report</b> & more",
   "icons": [{"src": "https://example.com/i.png", "mimeType": "image/png", "sizes": ["48x48"], "theme": "dark"}],
   "inputSchema": {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"], "x-vendor": 1},
   "outputSchema": {"type": "object", "properties": {"n": {"type": "number"}}},
   "annotations": {"title": "Report", "readOnlyHint": true, "futureHint": "kept"},
   "execution": {"taskSupport": "optional"},
   "_meta": {"ui": {"resourceUri": "ui://report/view.html"}, "vendor/flag": [1, 2.50, "x"]},
   "unknownMember": {"nested": true}},
  {"name": "plain", "inputSchema": {"type": "object"}}
], "_meta": {"page": 1}, "unknownTop": "kept"}`

// RawCallResult is the tools/call result RawUpstream sends: every content type of
// 2025-11-25 (text, image, audio, resource_link, embedded resource) plus a kind no
// revision defines, with unknown members and _meta at the result, content-item and
// annotation levels, structuredContent, and a number spelled the way JSON allows but a
// re-encoder changes.
const RawCallResult = `{"content": [
  {"type": "text", "text": "hello <world> & \u00e9", "annotations": {"audience": ["user"], "priority": 0.50, "lastModified": "2025-01-01T00:00:00Z", "futureAnn": 1}, "_meta": {"k": "v"}, "extraItem": true},
  {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png", "_meta": {"i": 1}},
  {"type": "audio", "data": "UklGRg==", "mimeType": "audio/wav"},
  {"type": "resource_link", "uri": "file:///a.txt", "name": "a", "title": "A", "mimeType": "text/plain", "size": 12, "icons": [{"src": "https://example.com/a.png"}]},
  {"type": "resource", "resource": {"uri": "file:///b.txt", "mimeType": "text/plain", "text": "b", "_meta": {"r": true}}},
  {"type": "hologram", "frames": [1, 2, 3], "_meta": {"future": "kind"}}
], "structuredContent": {"n": 1.0e2, "list": []}, "isError": false, "_meta": {"trace": "t-1"}, "unknownResultMember": {"a": [null]}}`

// RawPlainResult is the tools/call result of the tool "plain": content every SDK's
// schema accepts (the official TypeScript client refuses RawCallResult's unknown content
// kind), spelled with spacing a re-encoder would change.
const RawPlainResult = `{"content": [{"type": "text", "text": "plain <done>"}], "_meta": {"k": 1}}`

// RawReadResult is the resources/read result RawUpstream sends for any URI: an MCP Apps
// view (text/html;profile=mcp-app) with _meta.
const RawReadResult = `{"contents": [{"uri": "ui://report/view.html", "mimeType": "text/html;profile=mcp-app", "text": "<!doctype html><html><body><div id=\"app\">report & co</div><script>1<2</script></body></html>", "_meta": {"ui": {"prefersBorder": true}}}]}`

// A tools/call whose arguments hold delayMs (at most MaxSlowMS) is answered that much later
// (a long-running tool, for tasks); the client going away ends the wait.

// NewRawUpstream starts a RawUpstream on 127.0.0.1, closed in t.Cleanup. With sse, every
// answer to a request is an event stream.
func NewRawUpstream(t TB, sse bool) *RawUpstream {
	u := &RawUpstream{sse: sse}
	u.Server = httptest.NewServer(http.HandlerFunc(u.serve))
	u.URL = u.Server.URL + "/mcp"
	t.Cleanup(u.Server.Close)
	return u
}

// Received returns the messages received so far with method (all when "").
func (u *RawUpstream) Received(method string) []RawRequest {
	u.mu.Lock()
	defer u.mu.Unlock()
	var out []RawRequest
	for _, r := range u.received {
		if method == "" || r.Method == method {
			out = append(out, r)
		}
	}
	return out
}

func (u *RawUpstream) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	body, _ := io.ReadAll(r.Body)
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	}
	if json.Unmarshal(body, &msg) != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	u.mu.Lock()
	u.received = append(u.received, RawRequest{Method: msg.Method, Params: msg.Params, Header: r.Header.Clone()})
	u.mu.Unlock()
	if msg.ID == nil { // a notification
		w.WriteHeader(http.StatusAccepted)
		return
	}
	var result string
	switch msg.Method {
	case "initialize":
		if u.stateless {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(msg.ID)+`,"error":{"code":-32022,"message":"unsupported protocol version","data":{"supported":["2026-07-28"],"requested":"2025-11-25"}}}`)
			return
		}
		var p struct {
			ProtocolVersion string `json:"protocolVersion"`
		}
		_ = json.Unmarshal(msg.Params, &p)
		v := p.ProtocolVersion
		if v == "" || v > "2025-11-25" {
			v = "2025-11-25"
		}
		caps := `{"tools":{},"resources":{}}`
		if u.tasks != nil {
			caps = `{"tools":{},"resources":{},"tasks":{"cancel":{},"requests":{"tools":{"call":{}}}}}`
		}
		result = `{"protocolVersion":"` + v + `","capabilities":` + caps + `,"serverInfo":{"name":"raw-upstream","version":"1.0.0"}}`
	case "server/discover":
		if !u.stateless {
			u.write(w, msg.ID, "", `{"code":-32601,"message":"Method not found"}`)
			return
		}
		result = `{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{"tools":{},"resources":{},"prompts":{}},"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"raw-upstream","version":"1.0.0"}}}`
	case "ping":
		result = `{}`
	case "tools/list":
		result = RawToolsList
		if u.ToolsList != "" {
			result = u.ToolsList
		} else if u.stateless {
			result = RawMRTRToolsList
		}
	case "tasks/get", "tasks/result", "tasks/cancel":
		var p struct {
			TaskID string `json:"taskId"`
		}
		_ = json.Unmarshal(msg.Params, &p)
		u.mu.Lock()
		tk := u.tasks[p.TaskID]
		u.mu.Unlock()
		if tk == nil {
			u.write(w, msg.ID, "", `{"code":-32602,"message":"unknown task"}`)
			return
		}
		switch msg.Method {
		case "tasks/cancel":
			u.mu.Lock()
			if tk.status == "working" {
				tk.status = "cancelled"
				close(tk.cancel)
			}
			u.mu.Unlock()
		case "tasks/result":
			select {
			case <-tk.done:
			case <-r.Context().Done():
				return
			}
			if e, ok := u.CallErrors[tk.tool]; ok {
				u.write(w, msg.ID, "", e)
				return
			}
			u.write(w, msg.ID, RawCallResult, "")
			return
		}
		u.mu.Lock()
		status := tk.status
		u.mu.Unlock()
		u.write(w, msg.ID, u.taskJSON(p.TaskID, status), "")
		return
	case "tools/call":
		var p struct {
			Name      string          `json:"name"`
			Task      json.RawMessage `json:"task"`
			Arguments struct {
				DelayMS int  `json:"delayMs"`
				Elicit  bool `json:"elicit"`
			} `json:"arguments"`
			RequestState   string `json:"requestState"`
			InputResponses struct {
				Confirm struct {
					Action string `json:"action"`
				} `json:"confirm"`
			} `json:"inputResponses"`
			Meta struct {
				Caps struct {
					Elicitation json.RawMessage `json:"elicitation"`
				} `json:"io.modelcontextprotocol/clientCapabilities"`
			} `json:"_meta"`
		}
		_ = json.Unmarshal(msg.Params, &p)
		if p.Arguments.Elicit && !u.stateless {
			u.write(w, msg.ID, "", RawURLElicitationError)
			return
		}
		if u.stateless && p.Name == "needs_input" {
			switch {
			case p.RequestState == RawMRTRState && p.InputResponses.Confirm.Action == "accept":
				result = RawMRTRResult
			case p.Meta.Caps.Elicitation != nil:
				result = RawInputRequired
			default:
				result = RawNoElicitation
			}
			break
		}
		if d := u.VersionDelay[r.Header.Get("Mcp-Protocol-Version")]; d > 0 {
			time.Sleep(d)
		}
		if u.tasks != nil && p.Task != nil {
			u.mu.Lock()
			u.nextTask++
			id := "up-task-" + strconv.Itoa(u.nextTask)
			tk := &rawTask{tool: p.Name, status: "working", done: make(chan struct{}), cancel: make(chan struct{})}
			u.tasks[id] = tk
			u.mu.Unlock()
			go func() {
				select {
				case <-time.After(time.Duration(min(p.Arguments.DelayMS, MaxSlowMS)) * time.Millisecond):
					u.mu.Lock()
					if tk.status == "working" {
						tk.status = "completed"
					}
					u.mu.Unlock()
				case <-tk.cancel:
				}
				close(tk.done)
			}()
			u.write(w, msg.ID, `{"task":`+u.taskJSON(id, "working")+`}`, "")
			return
		}
		if u.Gate != nil {
			select {
			case <-u.Gate:
			case <-r.Context().Done():
				return
			}
		}
		if d := time.Duration(min(p.Arguments.DelayMS, MaxSlowMS)) * time.Millisecond; d > 0 {
			select {
			case <-time.After(d):
			case <-r.Context().Done():
				return
			}
		}
		result = RawCallResult
		if p.Name == "plain" {
			result = RawPlainResult
		}
		if e, ok := u.CallErrors[p.Name]; ok {
			u.write(w, msg.ID, "", e)
			return
		}
		if r, ok := u.CallResults[p.Name]; ok {
			result = r
		}
	case "resources/read":
		var p struct {
			URI string `json:"uri"`
		}
		_ = json.Unmarshal(msg.Params, &p)
		if p.URI == RawMissingURI {
			u.write(w, msg.ID, "", `{"code":-32002,"message":"Resource not found","data":{"uri":"`+RawMissingURI+`"}}`)
			return
		}
		result = RawReadResult
	default:
		u.write(w, msg.ID, "", `{"code":-32601,"message":"Method not found"}`)
		return
	}
	u.write(w, msg.ID, result, "")
}

// taskJSON is the upstream's Task id with status (MCP 2025-11-25 names).
func (u *RawUpstream) taskJSON(id, status string) string {
	ttl, poll := u.TaskTTL, u.TaskPollInterval
	if ttl == 0 {
		ttl = 60000
	}
	if poll == 0 {
		poll = 500
	}
	ttlJSON := strconv.Itoa(ttl)
	if u.TaskTTLNull {
		ttlJSON = "null"
	}
	return `{"taskId":"` + id + `","status":"` + status + `","ttl":` + ttlJSON +
		`,"createdAt":"2026-01-01T00:00:00Z","lastUpdatedAt":"2026-01-01T00:00:00Z","pollInterval":` + strconv.Itoa(poll) + `}`
}

// write answers id with result (or errObj), as JSON or as an awkwardly framed stream.
func (u *RawUpstream) write(w http.ResponseWriter, id json.RawMessage, result, errObj string) {
	var msg bytes.Buffer
	msg.WriteString(`{"jsonrpc":"2.0","id":`)
	msg.Write(id)
	if errObj != "" {
		msg.WriteString(`,"error":` + errObj + `}`)
	} else {
		msg.WriteString(`,"result":` + result + `}`)
	}
	if !u.sse {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(msg.Bytes())
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	var out strings.Builder
	out.WriteString("id: prime-1\r\ndata:\r\n\r\n") // priming event: no data
	out.WriteString(": keep-alive\r\n")
	out.WriteString("event: message\r\nid: 2\r\n")
	for _, line := range strings.Split(msg.String(), "\n") {
		out.WriteString("data: " + line + "\r\n")
	}
	out.WriteString("\r\n")
	_, _ = io.WriteString(w, out.String())
}
