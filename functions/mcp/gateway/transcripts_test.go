package gateway_test

import (
	"bufio"
	"bytes"
	"flag"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"
)

// update rewrites the response section of every golden transcript (docs/TESTING.md,
// "Golden transcripts"): go test ./functions/mcp/gateway -run TestTranscripts -update.
var update = flag.Bool("update", false, "rewrite testdata/transcripts/*.txtar responses")

// varying matches what differs per run in a response body: UUIDs (workspaces,
// connections, tasks, sessions) and RFC 3339 timestamps.
var varying = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`), "{{UUID}}"},
	{regexp.MustCompile(`\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})`), "{{TIME}}"},
}

// TestTranscripts pins the gateway's on-the-wire JSON-RPC behaviour: each
// testdata/transcripts/*.txtar holds a comment, a `request` section (first line
// "METHOD PATH", then header lines, a blank line, the body; {{WS}} and {{HANDLE}} are
// replaced by the run's workspace id and connection handle) and a `response` section
// (status line, Content-Type, blank line, body with per-run values normalised). A
// changed byte fails the subtest; -update rewrites the response sections.
func TestTranscripts(t *testing.T) {
	files, err := filepath.Glob("testdata/transcripts/*.txtar")
	if err != nil || len(files) == 0 {
		t.Fatalf("no transcripts: %v", err)
	}
	e := newEdgeEnv(t)
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			raw, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			arch := txtar.Parse(raw)
			var req, want *txtar.File
			for i := range arch.Files {
				switch arch.Files[i].Name {
				case "request":
					req = &arch.Files[i]
				case "response":
					want = &arch.Files[i]
				}
			}
			if req == nil {
				t.Fatal("no request section")
			}
			in := strings.NewReplacer("{{WS}}", e.ws, "{{HANDLE}}", e.handle).Replace(string(req.Data))
			got := transcriptDo(t, e.env.URL, e.admin, in)
			for _, v := range varying {
				got = v.re.ReplaceAll(got, []byte(v.with))
			}
			got = bytes.ReplaceAll(got, []byte(e.ws), []byte("{{WS}}"))
			got = bytes.ReplaceAll(got, []byte(e.handle), []byte("{{HANDLE}}"))
			if *update {
				if want == nil {
					arch.Files = append(arch.Files, txtar.File{Name: "response"})
					want = &arch.Files[len(arch.Files)-1]
				}
				want.Data = got
				if err := os.WriteFile(file, txtar.Format(arch), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if want == nil {
				t.Fatal("no response section (run with -update)")
			}
			if !bytes.Equal(got, want.Data) {
				t.Errorf("response differs from %s (rerun with -update if intended)\n--- got\n%s--- want\n%s", file, got, want.Data)
			}
		})
	}
}

// transcriptDo sends the request section in (token as the bearer unless an
// Authorization line is given) and renders the response as "STATUS\nContent-Type: …\n\nbody\n".
func transcriptDo(t *testing.T, base, token, in string) []byte {
	t.Helper()
	head, body, _ := strings.Cut(in, "\n\n")
	sc := bufio.NewScanner(strings.NewReader(head))
	sc.Scan()
	method, path, _ := strings.Cut(strings.TrimSpace(sc.Text()), " ")
	r, _ := http.NewRequest(method, base+path, strings.NewReader(strings.TrimSuffix(body, "\n")))
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
	var b bytes.Buffer
	_, _ = b.ReadFrom(resp.Body)
	out := strings.TrimRight(b.String(), "\n")
	return []byte(resp.Status + "\nContent-Type: " + resp.Header.Get("Content-Type") + "\n\n" + out + "\n")
}
