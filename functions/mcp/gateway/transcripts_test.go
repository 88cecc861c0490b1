package gateway_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"golang.org/x/tools/txtar"

	"github.com/agentpack/gateway/cmd/local/stacktest"
	"github.com/agentpack/gateway/shared/connections"
	"github.com/agentpack/gateway/shared/testpeer"
)

// update rewrites the response sections of every golden transcript (docs/TESTING.md,
// "Golden transcripts"): go test ./functions/mcp/gateway -run TestTranscripts -update.
var update = flag.Bool("update", false, "rewrite the response sections of testdata/transcripts/*.txtar")

// varying lists the only values normalised in a response: what differs from one run to
// the next by design. Everything else, including every error message and the order of
// members, is compared byte for byte.
var varying = []struct {
	re   *regexp.Regexp
	with string
}{
	// Row ids (workspaces, connections, catalog entries): UUIDs from Postgres.
	{regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`), "{{UUID}}"},
	// Timestamps (a task's createdAt, lastUpdatedAt): RFC 3339.
	{regexp.MustCompile(`\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})`), "{{TIME}}"},
	// errorIds (16 random hex digits, logx.NewID) in envelopes and JSON-RPC error data.
	{regexp.MustCompile(`"errorId": ?"[0-9a-f]{16}"`), `"errorId": "{{ERRORID}}"`},
}

// taskID finds the task id a response announces; the transcript's later requests name it
// {{TASK}} and its responses show it as {{TASK}}.
var taskID = regexp.MustCompile(`"taskId": ?"([^"{}]+)"`)

// TestTranscripts pins the gateway's on-the-wire JSON-RPC answers, go-sdk's included, so
// that a library upgrade or a rewrite of the edge shows up as a diff to review.
//
// Each testdata/transcripts/*.txtar (golang.org/x/tools/txtar) holds a comment and one or
// more exchanges, each a request section followed by its response section:
//
//   - `-- request --`: the first line "METHOD PATH", then header lines, a blank line and
//     the body. {{WS}} is replaced by the run's workspace id, {{HANDLE}} by the handle of
//     the go-sdk fixture upstream's connection (testpeer.NewFixture), {{TASKS}} by that of
//     a raw upstream whose tools declare task support (extToolsList), and {{TASK}} by the
//     task id an earlier response of the same file announced.
//     The admin's bearer token is sent unless the section sets Authorization itself.
//   - `-- request until TEXT --`: the same, sent again (every 50 ms, for at most
//     20 s × TEST_TIMEOUT_SCALE) until the response contains TEXT. Only the last response
//     is compared, so a task's transient states never reach the golden file.
//   - `-- response --`: the status line, the Content-Type, a blank line and the body. A JSON
//     body is indented (json.Indent: member order, escapes and number literals kept as
//     sent) so a change reads as a line diff; whitespace between JSON tokens is the one
//     thing not compared.
//
// Normalised, and nothing else (the varying table): row ids, timestamps, errorIds, and the
// run's workspace id, task id and handles (these only inside tool names, mcp_{{HANDLE}}_…). Session ids never appear: the gateway is
// stateless and sends no Mcp-Session-Id; the response section would show a header only
// if it is Content-Type.
//
// By default a transcript that differs in any byte fails its subtest; -update rewrites the
// response sections from what the gateway answered (review the diff before committing).
func TestTranscripts(t *testing.T) {
	files, err := filepath.Glob("testdata/transcripts/*.txtar")
	if err != nil || len(files) == 0 {
		t.Fatalf("no transcripts: %v", err)
	}
	e := newEdgeEnv(t)
	// A second upstream whose own tools/list says execution.taskSupport: the 2026-07-28
	// tasks extension makes tasks only of such tools (extToolsList: "report" waits
	// arguments.delayMs).
	tasksUp := testpeer.NewRawUpstream(t, false)
	tasksUp.ToolsList = extToolsList
	tc := e.env.Connection(t, stacktest.Admin("alice", e.ws), connections.CreateInput{Name: "Tasks", URL: tasksUp.URL, WorkspaceID: &e.ws}).Connection
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			raw, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			arch := txtar.Parse(raw)
			vars := map[string]string{"{{WS}}": e.ws, "{{HANDLE}}": e.handle, "{{TASKS}}": tc.Handle}
			var out []txtar.File
			changed, exchanges := false, 0
			for i := 0; i < len(arch.Files); i++ {
				f := arch.Files[i]
				until, isPoll := strings.CutPrefix(f.Name, "request until ")
				if f.Name != "request" && !isPoll {
					t.Fatalf("section %q where a request was expected", f.Name)
				}
				exchanges++
				in := string(f.Data)
				for k, v := range vars {
					in = strings.ReplaceAll(in, k, v)
				}
				got := transcriptDo(t, e.env.URL, e.admin, in)
				for deadline := time.Now().Add(testpeer.Scaled(20 * time.Second)); isPoll && !bytes.Contains(got, []byte(until)); {
					if time.Now().After(deadline) {
						t.Fatalf("request %d: no response contained %q; the last:\n%s", exchanges, until, got)
					}
					time.Sleep(50 * time.Millisecond)
					got = transcriptDo(t, e.env.URL, e.admin, in)
				}
				if m := taskID.FindSubmatch(got); m != nil && vars["{{TASK}}"] == "" {
					vars["{{TASK}}"] = string(m[1])
				}
				got = normalise(got, vars)
				out = append(out, f)
				var want *txtar.File
				if i+1 < len(arch.Files) && arch.Files[i+1].Name == "response" {
					i++
					want = &arch.Files[i]
				}
				if want == nil || !bytes.Equal(got, want.Data) {
					changed = true
					if !*update {
						if want == nil {
							t.Errorf("request %d has no response section (run with -update)", exchanges)
						} else {
							t.Errorf("response %d differs from %s (rerun with -update if intended)\n--- got\n%s--- want\n%s", exchanges, file, got, want.Data)
						}
					}
				}
				out = append(out, txtar.File{Name: "response", Data: got})
			}
			if *update && changed {
				arch.Files = out
				if err := os.WriteFile(file, txtar.Format(arch), 0o644); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

// normalise replaces what varies per run in a rendered response (the varying table, then
// the run's own values by their placeholder names; handles only in tool names).
func normalise(got []byte, vars map[string]string) []byte {
	for _, v := range varying {
		got = v.re.ReplaceAll(got, []byte(v.with))
	}
	for k, v := range vars {
		switch {
		case v == "":
		case k == "{{HANDLE}}" || k == "{{TASKS}}":
			// A handle is a short word ("edge", "tasks") that prose may contain too: it
			// is replaced only where it names a tool.
			got = bytes.ReplaceAll(got, []byte("mcp_"+v+"_"), []byte("mcp_"+k+"_"))
		default:
			got = bytes.ReplaceAll(got, []byte(v), []byte(k))
		}
	}
	return got
}

// transcriptDo sends the request section in (token as the bearer unless an Authorization
// line is given) and renders the response as "STATUS\nContent-Type: …\n\nbody\n", a JSON
// body indented by two spaces.
func transcriptDo(t *testing.T, base, token, in string) []byte {
	t.Helper()
	head, body, _ := strings.Cut(in, "\n\n")
	sc := bufio.NewScanner(strings.NewReader(head))
	sc.Scan()
	method, path, _ := strings.Cut(strings.TrimSpace(sc.Text()), " ")
	r, err := http.NewRequest(method, base+path, strings.NewReader(strings.TrimSuffix(body, "\n")))
	if err != nil {
		t.Fatal(err)
	}
	r.Header.Set("Authorization", "Bearer "+token)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), ":"); ok {
			r.Header.Set(strings.TrimSpace(k), strings.TrimSpace(v))
		}
	}
	resp, err := http.DefaultClient.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	var ind bytes.Buffer
	if json.Indent(&ind, bytes.TrimSpace(b), "", "  ") == nil {
		b = ind.Bytes()
	}
	return []byte(resp.Status + "\nContent-Type: " + resp.Header.Get("Content-Type") + "\n\n" + strings.TrimRight(string(b), "\n") + "\n")
}
