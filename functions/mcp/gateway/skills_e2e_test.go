package gateway_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/agentpack/gateway/shared/testpeer"
)

// skillEntryWire is a SEP-2640 skill entry as a client reads it.
type skillEntryWire struct {
	URI         string          `json:"uri"`
	Frontmatter json.RawMessage `json:"frontmatter"`
	Resources   []struct {
		URI    string `json:"uri"`
		Digest string `json:"digest"`
	} `json:"resources"`
}

// TestSkills (issue 34, SEP-2640): two upstreams that declare io.modelcontextprotocol/skills
// and serve the same skill URIs (testpeer.SkillsUpstream, go-sdk on loopback), at 2025-11-25
// and 2026-07-28:
//   - the single-server endpoint advertises the extension and passes skills/list and
//     skills/get through byte for byte;
//   - the aggregate endpoint advertises the extension and lists every skill of both under
//     skill://<handle>/…, frontmatter and digests as the upstream sent them;
//   - every file of every listed entry, read through the aggregate endpoint, reaches its
//     upstream under the upstream's own URI and hashes to the manifest's digest (what a
//     host verifies: SHA-256 of the bytes it receives);
//   - skills/get of skill://<handle>/… reaches that upstream with its own URI and answers the
//     entry under the handle; a URI of no connection is -32602 and reaches no upstream.
func TestSkills(t *testing.T) {
	t.Parallel()
	bundle := setupWorkspace(t, "Skills")
	env, ws, admin := bundle.env, bundle.ws, bundle.admin
	type conn struct {
		up         *testpeer.SkillsUpstream
		ID, Handle string
	}
	var conns []*conn
	for _, label := range []string{"alpha", "beta"} {
		up := testpeer.NewSkillsUpstream(t, label)
		dc := bundle.install(t, "Skills "+label, up.URL)
		conns = append(conns, &conn{up: up, ID: dc.ID, Handle: dc.Handle})
	}
	agg := "/mcp/" + ws
	initialize := `{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}`
	for _, path := range []string{agg, agg + "/servers/" + conns[0].ID} {
		resp, body := appsRPC(t, env, path, admin, "2025-11-25", "initialize", "", initialize)
		if res := resultOf(t, resp, body); !strings.Contains(string(res), `"io.modelcontextprotocol/skills":{}`) {
			t.Errorf("%s does not advertise the skills extension: %s", path, res)
		}
	}

	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(version, func(t *testing.T) {
			rpc := func(t *testing.T, path, method, params string) json.RawMessage {
				t.Helper()
				name := ""
				if method == "resources/read" {
					var p struct{ URI string }
					_ = json.Unmarshal([]byte(params), &p)
					name = p.URI // the 2026-07-28 Mcp-Name
				}
				resp, body := appsRPC(t, env, path, admin, version, method, name, params)
				return resultOf(t, resp, body)
			}
			for _, c := range conns {
				single := agg + "/servers/" + c.ID
				before := len(c.up.Received("skills/list"))
				if got := string(rpc(t, single, "skills/list", "{}")); got != c.up.SkillsListJSON {
					t.Errorf("single-server skills/list\n got %s\nwant %s", got, c.up.SkillsListJSON)
				}
				if n := len(c.up.Received("skills/list")); n != before+1 {
					t.Errorf("upstream got %d skills/list, want 1", n-before)
				}
				got := rpc(t, single, "skills/get", `{"uri":"skill://code-review/SKILL.md"}`)
				var entry struct{ Skill json.RawMessage }
				if err := json.Unmarshal(got, &entry); err != nil || !strings.Contains(c.up.SkillsListJSON, string(entry.Skill)) {
					t.Errorf("single-server skills/get: %s (not the upstream's entry byte for byte)", got)
				}
			}

			var listed struct{ Skills []skillEntryWire }
			raw := rpc(t, agg, "skills/list", "{}")
			if err := json.Unmarshal(raw, &listed); err != nil || len(listed.Skills) != 4 {
				t.Fatalf("aggregate skills/list: %v %s", err, raw)
			}
			for _, c := range conns {
				var up struct{ Skills []skillEntryWire }
				if err := json.Unmarshal([]byte(c.up.SkillsListJSON), &up); err != nil {
					t.Fatal(err)
				}
				for _, ue := range up.Skills {
					want := "skill://" + c.Handle + "/" + strings.TrimPrefix(ue.URI, "skill://")
					i := slices.IndexFunc(listed.Skills, func(e skillEntryWire) bool { return e.URI == want })
					if i < 0 {
						t.Errorf("aggregate skills/list lacks %s: %s", want, raw)
						continue
					}
					e := listed.Skills[i]
					if string(e.Frontmatter) != string(ue.Frontmatter) || len(e.Resources) != len(ue.Resources) {
						t.Errorf("%s: frontmatter %s, %d files; want %s, %d", want, e.Frontmatter, len(e.Resources), ue.Frontmatter, len(ue.Resources))
						continue
					}
					for j, r := range e.Resources {
						if r.Digest != ue.Resources[j].Digest || r.URI != "skill://"+c.Handle+"/"+strings.TrimPrefix(ue.Resources[j].URI, "skill://") {
							t.Errorf("%s file %d: %s %s, want %s under the handle with digest %s", want, j, r.URI, r.Digest, ue.Resources[j].URI, ue.Resources[j].Digest)
						}
						reads := len(c.up.Received("resources/read"))
						var read struct {
							Contents []struct{ URI, Text string }
						}
						if err := json.Unmarshal(rpc(t, agg, "resources/read", `{"uri":"`+r.URI+`"}`), &read); err != nil || len(read.Contents) != 1 {
							t.Fatalf("read %s: %v", r.URI, err)
						}
						if got := testpeer.SkillDigest([]byte(read.Contents[0].Text)); got != r.Digest || read.Contents[0].URI != r.URI {
							t.Errorf("read %s: uri %s, digest of the received bytes %s, manifest says %s", r.URI, read.Contents[0].URI, got, r.Digest)
						}
						rr := c.up.Received("resources/read")
						if len(rr) != reads+1 || !strings.Contains(string(rr[len(rr)-1].Params), `"uri":"`+ue.Resources[j].URI+`"`) {
							t.Errorf("read %s did not reach %s with %s", r.URI, c.Handle, ue.Resources[j].URI)
						}
					}
				}
			}

			c := conns[1]
			before := len(c.up.Received("skills/get"))
			uri := "skill://" + c.Handle + "/acme/billing/refunds/SKILL.md"
			var got struct{ Skill skillEntryWire }
			if err := json.Unmarshal(rpc(t, agg, "skills/get", `{"uri":"`+uri+`"}`), &got); err != nil || got.Skill.URI != uri ||
				len(got.Skill.Resources) != 1 || got.Skill.Resources[0].URI != uri ||
				got.Skill.Resources[0].Digest != testpeer.SkillDigest([]byte(c.up.Files["skill://acme/billing/refunds/SKILL.md"])) {
				t.Errorf("aggregate skills/get: %+v %v", got.Skill, err)
			}
			gets := c.up.Received("skills/get")
			if len(gets) != before+1 || !strings.Contains(string(gets[len(gets)-1].Params), `"uri":"skill://acme/billing/refunds/SKILL.md"`) {
				t.Errorf("upstream skills/get: %v", gets[before:])
			}
			n := len(conns[0].up.Received("skills/get")) + len(conns[1].up.Received("skills/get"))
			for _, bad := range []string{"skill://nosuch/code-review/SKILL.md", "skill://code-review/SKILL.md", "memo:x"} {
				resp, body := appsRPC(t, env, agg, admin, version, "skills/get", "", `{"uri":"`+bad+`"}`)
				if _, code := rpcError(t, body); code != -32602 {
					t.Errorf("skills/get %s: %d %s, want -32602", bad, resp.StatusCode, body)
				}
			}
			if m := len(conns[0].up.Received("skills/get")) + len(conns[1].up.Received("skills/get")); m != n {
				t.Errorf("a refused skills/get reached an upstream")
			}
		})
	}
}
