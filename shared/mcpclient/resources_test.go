package mcpclient

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"

	"github.com/agentpack/gateway/shared/apperr"
)

// resourcesUpstream is a streamable HTTP upstream whose resources/list answer for a
// cursor is answer(cursor): the JSON-RPC members after the id ("result":… or "error":…).
func resourcesUpstream(t *testing.T, answer func(cursor string) string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Cursor string `json:"cursor"`
			} `json:"params"`
		}
		_ = json.Unmarshal(body, &m)
		if m.ID == nil {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		rest := answer(m.Params.Cursor)
		if m.Method == "initialize" {
			rest = `"result":{"protocolVersion":"2025-11-25","capabilities":{"resources":{}},"serverInfo":{"name":"f","version":"1"}}`
		}
		_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(m.ID)+`,`+rest+`}`)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/mcp"
}

// TestListUIResources: every page is read and only the ui:// entries are kept (the scheme
// in any case), each byte for byte as the upstream listed it; a repeated cursor, a listing
// that does not end within MaxPages, a result that is not a list and the upstream's
// JSON-RPC error are errors.
func TestListUIResources(t *testing.T) {
	t.Parallel()
	pages := map[string]string{
		"":   `{"resources":[{"uri":"ui://a/x.html", "name":"x", "_meta":{"ui":{"csp":{}}}},{"uri":"file:///n"}],"nextCursor":"p2"}`,
		"p2": `{"resources":[{"uri":"https://y"},{"uri":"UI://b/y","name":"y"},{"uri":7}]}`,
	}
	for _, tc := range []struct {
		name   string
		answer func(cursor string) string
		want   []string
		code   apperr.Code
		rpc    bool
	}{
		{name: "two pages", answer: func(c string) string { return `"result":` + pages[c] },
			want: []string{`{"uri":"ui://a/x.html", "name":"x", "_meta":{"ui":{"csp":{}}}}`, `{"uri":"UI://b/y","name":"y"}`}},
		{name: "none", answer: func(string) string { return `"result":{"resources":[]}` }},
		{name: "repeated cursor", answer: func(string) string { return `"result":{"resources":[],"nextCursor":"same"}` }, code: apperr.UpstreamError},
		{name: "endless", answer: func(c string) string { return `"result":{"resources":[],"nextCursor":"n` + c + `"}` }, code: apperr.UpstreamError},
		{name: "not a list", answer: func(string) string { return `"result":{"resources":{}}` }, code: apperr.UpstreamError},
		{name: "upstream error", answer: func(string) string { return `"error":{"code":-32601,"message":"Method not found"}` }, rpc: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := newPool(t, &Options{MaxPages: 5})
			got, err := p.ListUIResources(t.Context(), Target{ConnectionID: "r", URL: resourcesUpstream(t, tc.answer)})
			switch {
			case tc.rpc:
				if RPCError(err) == nil {
					t.Fatalf("err = %v, want the upstream's JSON-RPC error", err)
				}
			case tc.code != "":
				wantCode(t, err, tc.code, "resources/list")
			case err != nil:
				t.Fatal(err)
			default:
				var s []string
				for _, r := range got {
					s = append(s, string(r))
				}
				if !slices.Equal(s, tc.want) {
					t.Fatalf("got %q\nwant %q", s, tc.want)
				}
			}
		})
	}
}

// TestListSkillsBound: ListSkills (the same lister as ListUIResources) keeps the first
// MaxSkills entries in the upstream's order and still reads every page, so a cursor loop
// past the bound is still an error; another list member's shape does not matter.
func TestListSkillsBound(t *testing.T) {
	t.Parallel()
	page := func(from int) string {
		var b []byte
		for i := range MaxSkills / 2 {
			if i > 0 {
				b = append(b, ',')
			}
			b = fmt.Appendf(b, `{"name":"s%d"}`, from+i)
		}
		return `{"skills":[` + string(b) + `],"tools":7`
	}
	pages := map[string]string{"": page(0) + `,"nextCursor":"p2"}`, "p2": page(MaxSkills/2) + `,"nextCursor":"p3"}`,
		"p3": `{"skills":[{"name":"late"}]}`}
	p := newPool(t, &Options{MaxPages: 5})
	got, err := p.ListSkills(t.Context(), Target{ConnectionID: "s", URL: resourcesUpstream(t, func(c string) string { return `"result":` + pages[c] })})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != MaxSkills || string(got[0]) != `{"name":"s0"}` || string(got[MaxSkills-1]) != fmt.Sprintf(`{"name":"s%d"}`, MaxSkills-1) {
		t.Fatalf("got %d skills, first %s", len(got), got[0])
	}
	loop := map[string]string{"": pages[""], "p2": pages["p2"], "p3": `{"skills":[],"nextCursor":"p2"}`}
	_, err = p.ListSkills(t.Context(), Target{ConnectionID: "s2", URL: resourcesUpstream(t, func(c string) string { return `"result":` + loop[c] })})
	wantCode(t, err, apperr.UpstreamError, "skills/list repeated a pagination cursor")
}
