// Command toolsdump records the tools/list of real MCP servers published on npm: the
// evaluation set of the tool search (docs/SEARCH.md "The evaluation set"). It reads the
// server list (shared/search/searcheval/testdata/sources.json: npm package, pinned
// version, and the placeholder arguments or environment a server needs to start without
// credentials), installs every package at its pinned version into a temporary directory
// with npm (scripts not run), starts each server over stdio with the official Go SDK
// client (mcp.CommandTransport), lists its tools (every page) and writes one JSON file
// per server into the output folder. A server that does not start or list within the
// timeout is reported and skipped; its old dump, if any, is left as it was.
//
// Usage (make search-set-record):
//
//	go run ./cmd/toolsdump [-sources FILE] [-out DIR] [-node PATH] [-only id,id]
//
// It needs the npm registry; nothing at test time runs it (tests and make bench-search
// read the committed dumps).
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentpack/gateway/shared/search/searcheval"
)

func main() {
	sources := flag.String("sources", "shared/search/searcheval/testdata/sources.json", "the server list")
	out := flag.String("out", "shared/search/searcheval/testdata/servers", "where the dumps go")
	node := flag.String("node", "node", "the node binary that runs the servers")
	only := flag.String("only", "", "comma-separated ids: record these only")
	timeout := flag.Duration("timeout", 90*time.Second, "per server: start and list within this")
	flag.Parse()
	if err := run(*sources, *out, *node, *only, *timeout); err != nil {
		log.Fatal(err)
	}
}

func run(sourcesPath, out, node, only string, timeout time.Duration) error {
	raw, err := os.ReadFile(sourcesPath)
	if err != nil {
		return err
	}
	var srcs []searcheval.Source
	if err := json.Unmarshal(raw, &srcs); err != nil {
		return fmt.Errorf("%s: %w", sourcesPath, err)
	}
	if only != "" {
		want := strings.Split(only, ",")
		srcs = slices.DeleteFunc(srcs, func(s searcheval.Source) bool { return !slices.Contains(want, s.ID) })
	}
	dir, err := os.MkdirTemp("", "toolsdump-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	var failed []string
	total := 0
	for _, s := range srcs {
		// One directory per package: a package that fails to install loses only itself.
		pkgDir := filepath.Join(dir, s.ID)
		if err := install(pkgDir, s); err != nil {
			log.Printf("%s: %v", s.ID, err)
			failed = append(failed, s.ID)
			continue
		}
		d, err := record(pkgDir, node, s, timeout)
		if err != nil {
			log.Printf("%s: %v", s.ID, err)
			failed = append(failed, s.ID)
			continue
		}
		b, err := json.MarshalIndent(d, "", " ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(out, s.ID+".json"), append(b, '\n'), 0o644); err != nil {
			return err
		}
		total += len(d.Tools)
		log.Printf("%s %s@%s: %d tools", s.ID, s.Package, s.Version, len(d.Tools))
	}
	log.Printf("recorded %d servers, %d tools; failed: %v", len(srcs)-len(failed), total, failed)
	return nil
}

// install installs one package at its pinned version into dir (scripts not run).
func install(dir string, s searcheval.Source) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "package.json"), []byte(`{"private":true}`), 0o600); err != nil {
		return err
	}
	cmd := exec.Command("npm", "install", "--no-audit", "--no-fund", "--ignore-scripts", "--no-save", "--legacy-peer-deps", s.Package+"@"+s.Version)
	cmd.Dir, cmd.Stdout, cmd.Stderr = dir, os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("npm install %s@%s: %w", s.Package, s.Version, err)
	}
	return nil
}

// record starts one installed server and lists its tools.
func record(dir, node string, s searcheval.Source, timeout time.Duration) (*searcheval.Dump, error) {
	pkgDir := filepath.Join(dir, "node_modules", filepath.FromSlash(s.Package))
	var pkg struct {
		Description string          `json:"description"`
		Version     string          `json:"version"`
		Bin         json.RawMessage `json:"bin"`
	}
	raw, err := os.ReadFile(filepath.Join(pkgDir, "package.json"))
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(raw, &pkg); err != nil {
		return nil, err
	}
	bin, err := binPath(pkg.Bin, s.Bin)
	if err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp(dir, "run-")
	if err != nil {
		return nil, err
	}
	subst := func(v string) string { return strings.ReplaceAll(v, "{tmp}", tmp) }
	args := []string{filepath.Join(pkgDir, bin)}
	for _, a := range s.Args {
		args = append(args, subst(a))
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, args...)
	cmd.Dir = tmp
	// A bare environment: PATH for node's children, HOME in the temp dir (some servers
	// write a config file there), and the source's placeholders.
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + tmp, "NODE_ENV=production"}
	for k, v := range s.Env {
		cmd.Env = append(cmd.Env, k+"="+subst(v))
	}
	cmd.Stderr = &prefixWriter{id: s.ID}
	client := mcp.NewClient(&mcp.Implementation{Name: "agentpack-toolsdump", Version: "1"}, nil)
	sess, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: time.Second}, nil)
	if err != nil {
		return nil, fmt.Errorf("connect: %w", err)
	}
	defer sess.Close()
	d := &searcheval.Dump{ID: s.ID, Package: s.Package, Version: pkg.Version, Description: pkg.Description}
	if r := sess.InitializeResult(); r != nil && r.ServerInfo != nil {
		d.ServerName, d.ServerVersion = r.ServerInfo.Name, r.ServerInfo.Version
		d.Instructions = r.Instructions
	}
	for t, err := range sess.Tools(ctx, nil) {
		if err != nil {
			return nil, fmt.Errorf("tools/list: %w", err)
		}
		schema, err := json.Marshal(t.InputSchema)
		if err != nil {
			return nil, err
		}
		d.Tools = append(d.Tools, searcheval.DumpTool{Name: t.Name, Title: t.Title, Description: t.Description, InputSchema: schema})
	}
	if len(d.Tools) == 0 {
		return nil, errors.New("no tools listed")
	}
	return d, nil
}

// binPath picks the executable of a package.json "bin": a string, or the entry named
// want (or the only entry) of an object.
func binPath(raw json.RawMessage, want string) (string, error) {
	var one string
	if json.Unmarshal(raw, &one) == nil && one != "" {
		return one, nil
	}
	var m map[string]string
	if err := json.Unmarshal(raw, &m); err != nil || len(m) == 0 {
		return "", fmt.Errorf("package.json has no bin")
	}
	if p, ok := m[want]; ok {
		return p, nil
	}
	if len(m) == 1 {
		for _, p := range m {
			return p, nil
		}
	}
	return "", fmt.Errorf("package.json bin has no %q (has %v)", want, m)
}

// prefixWriter logs a server's stderr lines with its id (only the first 2 KiB: some
// servers are chatty).
type prefixWriter struct {
	id string
	n  int
}

func (w *prefixWriter) Write(p []byte) (int, error) {
	if w.n < 2048 {
		log.Printf("%s stderr: %s", w.id, strings.TrimSpace(string(p)))
	}
	w.n += len(p)
	return len(p), nil
}
