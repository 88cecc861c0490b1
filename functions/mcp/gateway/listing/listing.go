// Package listing is the pure part of the gateway's tools/list and of its answer to an
// unknown tool: tool definitions under the name a client calls ([Definition]), their
// order ([Sort]), the pages of [PageSize] tools with opaque "page-<n>" cursors ([PageBytes],
// [Page], [PageIndex]) and the "did you mean" suggestion ([ClosestName], [UnknownTool]).
// It reads no request state: the gateway decides which tools a caller may see and hands
// their entries here.
package listing

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"strings"

	"github.com/agentpack/gateway/shared/catalog"
	"github.com/agentpack/gateway/shared/jsonobj"
	"github.com/agentpack/gateway/shared/policy"
)

// PageSize is how many tools one tools/list page holds (go-sdk's server pages at the
// same size).
const PageSize = 1000

// Entry is one tools/list entry: its name, its definition's JSON bytes, and the resource
// the access policies' "list" decision is asked about (zero when the workspace has none).
type Entry struct {
	Name string
	Def  []byte
	Res  policy.Resource
}

// Sort orders a tools/list by name (names are unique: built-ins are agentpack_*,
// proxied tools mcp_<handle>_<tool>); the sort is stable.
func Sort(all []Entry) {
	slices.SortStableFunc(all, func(a, b Entry) int { return cmp.Compare(a.Name, b.Name) })
}

// PageBytes is tools/list result page n (0-based) holding page: {"tools":[…]}, with
// nextCursor naming page n+1 when more is true, and ttlMs 0 and cacheScope "private"
// (the list depends on the caller; go-sdk's own lists carry the same in every revision).
func PageBytes(page []Entry, n int, more bool) []byte {
	var buf bytes.Buffer
	buf.WriteString(`{"tools":[`)
	for i, e := range page {
		if i > 0 {
			buf.WriteByte(',')
		}
		buf.Write(e.Def)
	}
	buf.WriteString(`]`)
	if more {
		buf.WriteString(`,"nextCursor":`)
		c, _ := json.Marshal(Cursor(n + 1))
		buf.Write(c)
	}
	buf.WriteString(`,"ttlMs":0,"cacheScope":"private"}`)
	return buf.Bytes()
}

// Page is the tools/list result page of all (sorted) at cursor ("" = the first page);
// ok is false for a cursor that does not name one of all's pages after the first.
func Page(all []Entry, cursor string) (result json.RawMessage, ok bool) {
	n, ok := PageIndex(cursor, (len(all)+PageSize-1)/PageSize)
	if !ok {
		return nil, false
	}
	start := n * PageSize
	return PageBytes(all[start:min(start+PageSize, len(all))], n, start+PageSize < len(all)), true
}

// PageIndex is the 0-based page cursor names in a list of pages pages: 0 for "", n for
// Cursor(n) with 1 ≤ n < pages; ok is false for anything else (a malformed cursor, page 0
// spelled out, a page past the end).
func PageIndex(cursor string, pages int) (n int, ok bool) {
	if cursor == "" {
		return 0, true
	}
	n, err := pageOf(cursor)
	if err != nil || n <= 0 || n >= pages {
		return 0, false
	}
	return n, true
}

// Cursor is the opaque cursor of page n (1-based pages after the first).
func Cursor(n int) string { return "page-" + strconv.Itoa(n) }

func pageOf(cursor string) (int, error) {
	s, ok := strings.CutPrefix(cursor, "page-")
	if !ok {
		return 0, errors.New("not a page cursor")
	}
	return strconv.Atoi(s)
}

// Definition is t's definition under name: the stored upstream definition with its name
// replaced (every other member, known or not, kept as sent), or, for a tool listed before
// definitions were kept, one built from the stored members. Errors: a stored definition
// that is not a JSON object.
func Definition(t *catalog.Tool, name string) ([]byte, error) {
	nb, _ := json.Marshal(name)
	if len(t.Definition) > 0 {
		if name == t.UpstreamName {
			if n, ok := definitionName(t.Definition); ok && n == name {
				return t.Definition, nil
			}
		}
		return jsonobj.SetMember(t.Definition, "name", nb)
	}
	return json.Marshal(struct {
		Name         string          `json:"name"`
		Title        string          `json:"title,omitempty"`
		Description  string          `json:"description,omitempty"`
		InputSchema  json.RawMessage `json:"inputSchema"`
		OutputSchema json.RawMessage `json:"outputSchema,omitempty"`
		Annotations  json.RawMessage `json:"annotations,omitempty"`
	}{name, t.Title, t.Description, t.InputSchema, t.OutputSchema, t.Annotations})
}

func definitionName(def json.RawMessage) (string, bool) {
	var d struct {
		Name *string `json:"name"`
	}
	if json.Unmarshal(def, &d) != nil || d.Name == nil {
		return "", false
	}
	return *d.Name, true
}
