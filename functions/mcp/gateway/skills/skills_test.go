package skills

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/agentpack/gateway/functions/mcp/gateway/request"
	"github.com/agentpack/gateway/shared/catalog"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// TestSkillURIRoundTrip: every skill:// URI maps to skill://<handle>/… and back to itself
// (multi-segment paths, query); other schemes and a URI without a handle or path do not.
func TestSkillURIRoundTrip(t *testing.T) {
	t.Parallel()
	for _, uri := range []string{"skill://code-review/SKILL.md", "skill://acme/billing/refunds/templates/email.md", "skill://x/SKILL.md?v=2"} {
		got, ok := URI("gh", uri)
		if !ok || got != "skill://gh/"+uri[len("skill://"):] {
			t.Fatalf("URI(%q) = %q, %v", uri, got, ok)
		}
		if h, up, ok := Target(got); !ok || h != "gh" || up != uri {
			t.Fatalf("Target(%q) = %q, %q, %v", got, h, up, ok)
		}
	}
	for _, uri := range []string{"ui://d/a", "github://o/r/SKILL.md", "skill://", ""} {
		if got, ok := URI("gh", uri); ok {
			t.Errorf("skillURI mapped %q to %q", uri, got)
		}
	}
	for _, uri := range []string{"skill://gh", "skill://gh/", "skill:///x", "memo:x"} {
		if h, up, ok := Target(uri); ok {
			t.Errorf("Target(%q) = %q, %q", uri, h, up)
		}
	}
}

// TestSkillEntry: an entry's uri and resources[].uri are mapped in place; frontmatter,
// digests, spacing and unknown members keep every byte; an entry under another scheme is
// left out.
func TestSkillEntry(t *testing.T) {
	t.Parallel()
	in := `{"uri": "skill://a/SKILL.md", "frontmatter": {"name":"a", "x": [1, 2.50]}, "resources": [ {"uri":"skill://a/SKILL.md","digest":"sha256:00"} , {"uri":"https://x/y","digest":"sha256:11"}], "k": true}`
	want := `{"uri": "skill://gh/a/SKILL.md", "frontmatter": {"name":"a", "x": [1, 2.50]}, "resources": [ {"uri":"skill://gh/a/SKILL.md","digest":"sha256:00"} , {"uri":"https://x/y","digest":"sha256:11"}], "k": true}`
	got, ok := entry(json.RawMessage(in), "gh")
	if !ok || string(got) != want {
		t.Errorf("\n got %s\nwant %s", got, want)
	}
	if _, ok := entry(json.RawMessage(`{"uri":"github://o/r/SKILL.md","frontmatter":{}}`), "gh"); ok {
		t.Error("an entry under another scheme was kept")
	}
}

// TestRefusals: what the aggregate endpoint refuses before asking any upstream — a
// skills/list cursor or params that are no object, a skills/get or read of no declaring
// connection, a method not the extension's — each with its JSON-RPC code; and the
// connections and capability follow what the upstreams declared.
func TestRefusals(t *testing.T) {
	t.Parallel()
	st := &request.State{Snapshot: &catalog.Snapshot{Doc: &catalog.Document{Connections: []catalog.Connection{
		{ID: "1", Handle: "gh", Capabilities: json.RawMessage(`{"extensions":{"io.modelcontextprotocol/skills":{}}}`)},
		{ID: "2", Handle: "no", Capabilities: json.RawMessage(`{"extensions":{"io.modelcontextprotocol/skills":null}}`)},
		{ID: "3", Handle: "un"},
	}}}}
	conns := Connections(st)
	if len(conns) != 1 || conns["gh"] == nil {
		t.Fatalf("Connections = %v", conns)
	}
	if s, ok := conns.Capability(); !ok || string(s) != `{}` {
		t.Errorf("Capability = %s, %v", s, ok)
	}
	if _, ok := (Conns{}).Capability(); ok {
		t.Error("advertised without connections")
	}
	s := New(nil, nil)
	for _, tc := range []struct {
		method, params string
		code           int64
		want           string
	}{
		{"skills/list", `{"cursor":"x"}`, jsonrpc.CodeInvalidParams, "invalid cursor"},
		{"skills/list", `[1]`, jsonrpc.CodeInvalidParams, "params must be an object"},
		{"skills/get", `{"uri":"skill://no/a/SKILL.md"}`, jsonrpc.CodeInvalidParams, "not a skill of this server"},
		{"skills/get", `7`, jsonrpc.CodeInvalidParams, "params must be an object with uri"},
		{"skills/nope", `{}`, jsonrpc.CodeMethodNotFound, "method not found"},
	} {
		_, err := s.Serve(t.Context(), st, conns, tc.method, json.RawMessage(tc.params))
		var je *jsonrpc.Error
		if !errors.As(err, &je) || je.Code != tc.code || !strings.Contains(je.Message, tc.want) {
			t.Errorf("%s %s = %v; want %d %q", tc.method, tc.params, err, tc.code, tc.want)
		}
	}
	if _, ok := conns.Reads(json.RawMessage(`{"uri":"skill://un/a/SKILL.md"}`)); ok {
		t.Error("a read of a connection without the extension was routed")
	}
	if uri, ok := conns.Reads(json.RawMessage(`{"uri":"skill://gh/a/SKILL.md"}`)); !ok || uri != "skill://gh/a/SKILL.md" {
		t.Errorf("Reads = %q, %v", uri, ok)
	}
	if _, err := s.Read(t.Context(), st, conns, "skill://un/a/SKILL.md", json.RawMessage(`{}`)); err == nil {
		t.Error("read of an unknown handle answered")
	}
}
