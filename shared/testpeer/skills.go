package testpeer

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// SkillsUpstream is an MCP server that declares the Skills extension (SEP-2640,
// io.modelcontextprotocol/skills) on loopback: a go-sdk server (streamable HTTP, stateless,
// JSON answers) serving the skills' files as skill:// resources, behind a front that
// answers the extension's own methods, skills/list and skills/get, which go-sdk v1.8.0 does
// not route to a handler. Each upstream serves two skills labelled by Label:
//
//	skill://code-review/SKILL.md, skill://code-review/references/REFERENCE.md
//	skill://acme/billing/refunds/SKILL.md
//
// skills/list answers SkillsListJSON (two entries; the frontmatter as written, digests
// "sha256:<hex>" of each file's bytes) with the spacing of a hand-written server, so that a
// test can compare bytes; skills/get answers the entry of a listed SKILL.md, or -32602.
type SkillsUpstream struct {
	URL   string
	Label string
	// Files are the skills' files by skill:// URI.
	Files map[string]string
	// SkillsListJSON is the skills/list result, byte for byte.
	SkillsListJSON string

	entries map[string]string // SKILL.md URI → its entry JSON
	mu      sync.Mutex
	recv    []RawRequest
}

// SkillDigest is the SEP-2640 digest of content: "sha256:" and the lowercase hex SHA-256 of
// its bytes.
func SkillDigest(content []byte) string {
	sum := sha256.Sum256(content)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// NewSkillsUpstream starts a SkillsUpstream labelled label on 127.0.0.1, closed in
// t.Cleanup.
func NewSkillsUpstream(t TB, label string) *SkillsUpstream {
	u := &SkillsUpstream{Label: label, entries: map[string]string{}, Files: map[string]string{
		"skill://code-review/SKILL.md": "---\nname: code-review\ndescription: Review changes for " + label +
			" (quality, tests, naming)\nmetadata:\n  owner: " + label + "\n---\n\n# Code review\n\nRead references/REFERENCE.md first. Ünïcode stays as sent: ✓\n",
		"skill://code-review/references/REFERENCE.md": "# Reference of " + label + "\n\n- naming\n- tests\n",
		"skill://acme/billing/refunds/SKILL.md": "---\nname: refunds\ndescription: Refund a " + label +
			" order\n---\n\nCheck the order, then refund.\n",
	}}
	type skill struct {
		uri, frontmatter string
		files            []string
	}
	skills := []skill{
		{"skill://code-review/SKILL.md", `{"name":"code-review","description":"Review changes for ` + label +
			` (quality, tests, naming)","metadata":{"owner":"` + label + `"}}`,
			[]string{"skill://code-review/SKILL.md", "skill://code-review/references/REFERENCE.md"}},
		{"skill://acme/billing/refunds/SKILL.md", `{"name":"refunds","description":"Refund a ` + label + ` order"}`,
			[]string{"skill://acme/billing/refunds/SKILL.md"}},
	}
	var list []string
	for _, s := range skills {
		var res []string
		for _, f := range s.files {
			res = append(res, `{ "uri": "`+f+`", "digest": "`+SkillDigest([]byte(u.Files[f]))+`" }`)
		}
		e := `{"uri": "` + s.uri + `", "frontmatter": ` + s.frontmatter + `, "resources": [` + strings.Join(res, ", ") + `]}`
		u.entries[s.uri] = e
		list = append(list, e)
	}
	u.SkillsListJSON = `{"skills": [` + strings.Join(list, ",\n  ") + `], "resultType": "complete", "ttlMs": 0, "cacheScope": "private"}`

	caps := &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}, Resources: &mcp.ResourceCapabilities{}}
	caps.AddExtension("io.modelcontextprotocol/skills", map[string]any{})
	s := mcp.NewServer(&mcp.Implementation{Name: "skills-" + label, Version: "1.0.0"}, &mcp.ServerOptions{Capabilities: caps})
	s.AddTool(&mcp.Tool{Name: "lint", Description: "Lints a change", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "clean"}}}, nil
		})
	uris := make([]string, 0, len(u.Files))
	for k := range u.Files {
		uris = append(uris, k)
	}
	sort.Strings(uris)
	for _, uri := range uris {
		mime := "text/markdown"
		s.AddResource(&mcp.Resource{URI: uri, Name: strings.TrimPrefix(uri, "skill://"), MIMEType: mime},
			func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
				return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: mime, Text: u.Files[req.Params.URI]}}}, nil
			})
	}
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s },
		&mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
		}
		if r.Method == http.MethodPost && json.Unmarshal(body, &msg) == nil && msg.Method != "" {
			u.mu.Lock()
			u.recv = append(u.recv, RawRequest{Method: msg.Method, Params: msg.Params, Header: r.Header.Clone()})
			u.mu.Unlock()
		}
		if msg.Method != "skills/list" && msg.Method != "skills/get" {
			h.ServeHTTP(w, r)
			return
		}
		result, rpcErr := u.SkillsListJSON, ""
		if msg.Method == "skills/get" {
			var p struct {
				URI string `json:"uri"`
			}
			_ = json.Unmarshal(msg.Params, &p)
			if e, ok := u.entries[p.URI]; ok {
				result = `{"skill": ` + e + `, "resultType": "complete"}`
			} else {
				result, rpcErr = "", `{"code":-32602,"message":"not a skill of this server"}`
			}
		}
		w.Header().Set("Content-Type", "application/json")
		if rpcErr != "" {
			_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(msg.ID)+`,"error":`+rpcErr+`}`)
			return
		}
		_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(msg.ID)+`,"result":`+result+`}`)
	}))
	t.Cleanup(srv.Close)
	u.URL = srv.URL + "/mcp"
	return u
}

// Received returns the requests of method u received, in order.
func (u *SkillsUpstream) Received(method string) []RawRequest {
	u.mu.Lock()
	defer u.mu.Unlock()
	var out []RawRequest
	for _, r := range u.recv {
		if r.Method == method {
			out = append(out, r)
		}
	}
	return out
}
