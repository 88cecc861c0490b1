package tasks

import (
	"bytes"
	"encoding/json"
	"time"

	"github.com/agentpack/gateway/functions/mcp/gateway/wire"
	"github.com/agentpack/gateway/shared/db"
	"github.com/agentpack/gateway/shared/jsonobj"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MinVersion is the first protocol revision with tasks (2025-11-25).
const MinVersion = "2025-11-25"

// Extension is the 2026-07-28 tasks extension's identifier (SEP-2663).
const Extension = "io.modelcontextprotocol/tasks"

// capability is advertised in initialize / server/discover results of the revisions with
// the 2025-11-25 form of tasks (2026-07-28 advertises the extension instead).
var capability = json.RawMessage(`{"list":{},"cancel":{},"requests":{"tools":{"call":{}}}}`)

// ErrMissingExtension is SEP-2663's answer to a client that did not declare the extension
// on a request the server cannot serve without it (-32021, SEP-2575 "Missing Required
// Client Capabilities", data.requiredCapabilities naming the extension).
var ErrMissingExtension = &jsonrpc.Error{Code: mcp.CodeMissingRequiredClientCapabilities,
	Message: "missing required client capability: this request needs the " + Extension + " extension declared in _meta." + mcp.MetaKeyClientCapabilities,
	Data:    json.RawMessage(`{"requiredCapabilities":{"extensions":{"` + Extension + `":{}}}}`)}

// ClientDeclares reports whether a 2026-07-28 request's params declare the tasks extension
// in their per-request client capabilities
// (_meta["io.modelcontextprotocol/clientCapabilities"].extensions).
func ClientDeclares(params json.RawMessage) bool {
	var p struct {
		Meta struct {
			Caps struct {
				Extensions map[string]json.RawMessage `json:"extensions"`
			} `json:"io.modelcontextprotocol/clientCapabilities"`
		} `json:"_meta"`
	}
	if json.Unmarshal(params, &p) != nil {
		return false
	}
	v, ok := p.Meta.Caps.Extensions[Extension]
	return ok && string(v) != "null"
}

// Object is the 2025-11-25 wire Task of row t (ttl and pollInterval in ms).
func Object(t *db.Task) map[string]any { return fields(t, "ttl", "pollInterval") }

// fields is the Task of row t with its ttl (integer ms, or null when the upstream of a
// routed task said its lifetime is unlimited) and poll interval (integer ms) under the names
// of the caller's form: ttl / pollInterval (2025-11-25) or ttlMs / pollIntervalMs
// (SEP-2663).
func fields(t *db.Task, ttlKey, pollKey string) map[string]any {
	o := map[string]any{
		"taskId": t.ID, "status": t.Status, ttlKey: t.TTLMS,
		"createdAt":     t.CreatedAt.UTC().Format(time.RFC3339Nano),
		"lastUpdatedAt": t.LastUpdatedAt.UTC().Format(time.RFC3339Nano),
		pollKey:         t.PollIntervalMS,
	}
	if t.TTLUnlimited {
		o[ttlKey] = nil // the upstream's unlimited lifetime (migrations/00040)
	}
	if t.StatusMessage != nil {
		o["statusMessage"] = *t.StatusMessage
	}
	return o
}

// CreateResult is the flat 2026-07-28 CreateTaskResult of row t (SEP-2663 "Task
// Creation"): the task's fields and resultType "task".
func CreateResult(t *db.Task) map[string]any {
	o := detailed(t)
	delete(o, "result")
	delete(o, "error")
	o["resultType"] = "task"
	return o
}

// detailed is the tasks/get answer of row t (SEP-2663 DetailedTask): a finished call with
// a result is "completed" with the result inlined — isError results too, and the
// gateway's own isError envelope for a call it could not complete (stored as failed for
// the 2025-11-25 form); a JSON-RPC error is "failed" with the error inlined;
// "input_required" from a routed upstream is shown as "working" (the gateway cannot relay
// its input requests).
func detailed(t *db.Task) map[string]any {
	o := fields(t, "ttlMs", "pollIntervalMs")
	switch {
	case t.Status == db.TaskCancelled:
	case len(t.Error) > 0:
		o["status"] = db.TaskFailed
		o["error"] = json.RawMessage(t.Error)
	case len(t.Result) > 0 && (t.Status == db.TaskCompleted || t.Status == db.TaskFailed):
		o["status"] = db.TaskCompleted
		o["result"] = completeResult(t.Result)
	case t.Status == db.TaskFailed:
		msg := "task failed"
		if t.StatusMessage != nil {
			msg = *t.StatusMessage
		}
		o["error"] = wire.Refusal(jsonrpc.CodeInternalError, msg)
	default:
		o["status"] = db.TaskWorking
	}
	return o
}

// completeResult is a finished call's stored result as SEP-2663's CompletedTask inlines it:
// the CallToolResult the call would have answered synchronously at 2026-07-28, so with
// resultType "complete" (added when the upstream's result has none; the Tasks extension's
// reference requester, @modelcontextprotocol/ext-tasks, refuses a result without it). A
// result that is no JSON object is kept as stored.
func completeResult(res []byte) json.RawMessage {
	if m, ok := jsonobj.Members(res); ok && m["resultType"] == nil {
		if out, err := jsonobj.SetMember(res, "resultType", json.RawMessage(`"complete"`)); err == nil {
			return out
		}
	}
	return json.RawMessage(res)
}

// withUpstreamTiming shows a routed task's ttl and poll interval as its upstream last
// reported them (under the names ttlKey and pollKey of the caller's revision), when it did.
func withUpstreamTiming(o map[string]any, up *upstreamTask, ttlKey, pollKey string) map[string]any {
	if up == nil {
		return o
	}
	if v, ok := up.ttl(); ok {
		o[ttlKey] = v
	} else if up.ttlUnlimited() {
		o[ttlKey] = nil
	}
	if v, ok := up.pollInterval(); ok {
		o[pollKey] = v
	}
	return o
}

// WithCapability returns an initialize or server/discover JSON-RPC response (msg, as
// written) with the tasks capability added, for a revision that defines tasks: at
// 2025-11-25 (and later revisions before 2026-07-28) capabilities.tasks; at 2026-07-28
// (newProtocol) the extension under capabilities.extensions (SEP-2663 "Capability
// Negotiation"), next to any extension already advertised, and never capabilities.tasks.
// A response that is not a result, or of an earlier revision, comes back unchanged; ok
// reports whether it changed.
func WithCapability(msg []byte, newProtocol bool) (out []byte, ok bool) {
	var m map[string]json.RawMessage
	if json.Unmarshal(msg, &m) != nil || m["result"] == nil {
		return msg, false
	}
	var res map[string]json.RawMessage
	if json.Unmarshal(m["result"], &res) != nil {
		return msg, false
	}
	var v string
	_ = json.Unmarshal(res["protocolVersion"], &v)
	if !newProtocol && v != "" && v < MinVersion {
		return msg, false
	}
	caps := res["capabilities"]
	if len(caps) == 0 || string(caps) == "null" {
		caps = json.RawMessage(`{}`)
	}
	var err error
	if newProtocol {
		ext := json.RawMessage(`{}`)
		if mm, ok := jsonobj.Members(caps); ok && len(mm["extensions"]) > 0 && string(mm["extensions"]) != "null" {
			ext = mm["extensions"]
		}
		if ext, err = jsonobj.SetMember(ext, Extension, json.RawMessage(`{}`)); err != nil {
			return msg, false
		}
		if caps, err = jsonobj.DeleteMember(caps, "tasks"); err != nil {
			return msg, false
		}
		caps, err = jsonobj.SetMember(caps, "extensions", ext)
	} else {
		caps, err = jsonobj.SetMember(caps, "tasks", capability)
	}
	if err != nil {
		return msg, false
	}
	result, err := jsonobj.SetMember(m["result"], "capabilities", caps)
	if err != nil {
		return msg, false
	}
	if out, err = jsonobj.SetMember(msg, "result", result); err != nil {
		return msg, false
	}
	return out, true
}

// WithExecution adds execution.taskSupport "optional" to a tool definition that has no
// execution member: the gateway runs any such tool as a task. Definitions that say
// anything about execution are kept as sent.
func WithExecution(def []byte) []byte {
	if bytes.Contains(def, []byte(`"execution"`)) {
		var d map[string]json.RawMessage
		if json.Unmarshal(def, &d) == nil && d["execution"] != nil {
			return def
		}
	}
	out, err := jsonobj.SetMember(def, "execution", json.RawMessage(`{"taskSupport":"optional"}`))
	if err != nil {
		return def
	}
	return out
}
