// The request's and the result's bytes: the members the gateway changes or reads on the
// way, each edited in place (shared/jsonobj) so every other byte goes as the client or the
// upstream wrote it.

package forward

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"

	"github.com/agentpack/gateway/shared/jsonobj"
)

// PlainParams is a tools/call's params without a "task" member: a client of a revision
// without tasks (or a request the edge serves synchronously) must not make the upstream
// start a task whose id the client could not use.
func PlainParams(params json.RawMessage) json.RawMessage {
	if !bytes.Contains(params, []byte(`"task"`)) {
		return params
	}
	out, err := jsonobj.DeleteMember(params, "task")
	if err != nil {
		return params
	}
	return out
}

// ResultIsError reports whether a tools/call result says isError: true.
func ResultIsError(res json.RawMessage) bool {
	if !bytes.Contains(res, []byte(`"isError"`)) {
		return false
	}
	var r struct {
		IsError bool `json:"isError"`
	}
	return json.Unmarshal(res, &r) == nil && r.IsError
}

// ResultInputRequired reports whether res is an InputRequiredResult (MCP 2026-07-28 multi
// round-trip requests: resultType "input_required"), the answer of a call that is not
// complete yet.
func ResultInputRequired(res json.RawMessage) bool {
	if !bytes.Contains(res, []byte(`"input_required"`)) {
		return false
	}
	var r struct {
		ResultType string `json:"resultType"`
	}
	return json.Unmarshal(res, &r) == nil && r.ResultType == "input_required"
}

// UpstreamParams is the client's tools/call params with the upstream's tool name and
// without the downstream exchange's _meta fields (WithoutDownstreamMeta); every other
// member keeps its bytes. Errors when params is not a JSON object.
func UpstreamParams(params json.RawMessage, upstreamName string) (json.RawMessage, error) {
	nb, _ := json.Marshal(upstreamName)
	out, err := jsonobj.SetMember(params, "name", nb)
	if err != nil {
		return nil, err
	}
	return WithoutDownstreamMeta(out)
}

// WithoutDownstreamMeta removes from params._meta what describes the client's exchange
// with the gateway rather than the request: the progress token (the pool asks the upstream
// for progress with a token of its own when it relays) and the io.modelcontextprotocol/*
// protocol fields of 2026-07-28 (the pool sets its own for its upstream session) — except
// the client's per-request capabilities (io.modelcontextprotocol/clientCapabilities),
// which go upstream so that a 2026-07-28 upstream may answer an InputRequiredResult the
// client can fulfil (MRTR: a server MUST NOT ask for input the client did not declare; the
// pool sends them to 2026-07-28 upstreams only), less the Tasks capability and extension:
// whether an upstream hop runs as a task is the gateway's decision. Other _meta keys are
// the request's and go upstream. Errors when params or its _meta is not a JSON object.
func WithoutDownstreamMeta(params json.RawMessage) (json.RawMessage, error) {
	if !bytes.Contains(params, []byte(`"_meta"`)) {
		return params, nil
	}
	p, ok := jsonobj.Members(params)
	if !ok {
		return nil, errors.New("params is not a JSON object")
	}
	raw, has := p["_meta"]
	if !has {
		return params, nil
	}
	var meta map[string]json.RawMessage
	if err := json.Unmarshal(raw, &meta); err != nil {
		return nil, errors.New("_meta is not an object")
	}
	changed := false
	for k, v := range meta {
		switch {
		case k == clientCapabilitiesKey:
			if caps, ok := withoutTaskCapabilities(v); ok {
				meta[k] = caps
				changed = true
			}
		case k == progressTokenKey || strings.HasPrefix(k, "io.modelcontextprotocol/"):
			delete(meta, k)
			changed = true
		}
	}
	if !changed {
		return params, nil
	}
	mb, _ := json.Marshal(meta)
	return jsonobj.SetMember(params, "_meta", mb)
}

// clientCapabilitiesKey is the _meta key of a 2026-07-28 request's client capabilities.
const clientCapabilitiesKey = "io.modelcontextprotocol/clientCapabilities"

// tasksExtension is the Tasks extension's identifier in capabilities.extensions.
const tasksExtension = "io.modelcontextprotocol/tasks"

// withoutTaskCapabilities returns caps without "tasks" and without the Tasks extension,
// and ok true when it removed one; caps that are not an object come back unchanged (ok
// false).
func withoutTaskCapabilities(caps json.RawMessage) (json.RawMessage, bool) {
	if !bytes.Contains(caps, []byte("tasks")) {
		return nil, false
	}
	m, ok := jsonobj.Members(caps)
	if !ok {
		return nil, false
	}
	out, changed := caps, false
	if m["tasks"] != nil {
		if o, err := jsonobj.DeleteMember(out, "tasks"); err == nil {
			out, changed = o, true
		}
	}
	if ext, ok := jsonobj.Members(m["extensions"]); ok && ext[tasksExtension] != nil {
		if e, err := jsonobj.DeleteMember(m["extensions"], tasksExtension); err == nil {
			if o, err := jsonobj.SetMember(out, "extensions", e); err == nil {
				out, changed = o, true
			}
		}
	}
	return out, changed
}

// requestName is what names a prompts/get or resources/read request: the prompt's name or
// the resource's URI (the members of its params p).
func requestName(p map[string]json.RawMessage) string {
	var name string
	if json.Unmarshal(p["name"], &name) != nil || name == "" {
		_ = json.Unmarshal(p["uri"], &name)
	}
	return name
}
