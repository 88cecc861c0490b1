// Package rie runs a Lambda bootstrap under the AWS Lambda Runtime Interface Emulator on
// loopback and invokes it, measuring what a cold start costs. The infrastructure checks
// (infra/check) and the benchmarks use it.
//
// The emulator (`make rie-install` puts a pinned build in .state/bin) listens on the
// addresses it is given — always 127.0.0.1 here, never its 0.0.0.0 default — starts the
// bootstrap lazily on the first invoke, forwards its own environment to the bootstrap,
// and logs "INIT REPORT(durationMs: N)" for the cold start.
package rie

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/agentpack/gateway/shared/reporoot"
)

// Binary returns the emulator to use: $RIE, else .state/bin/aws-lambda-rie under the
// repository root found from dir upwards, else aws-lambda-rie on PATH. It returns "" when
// none exists.
func Binary(dir string) string {
	if p := os.Getenv("RIE"); p != "" {
		if _, err := os.Stat(p); err == nil {
			return p
		}
		return ""
	}
	if root, err := reporoot.Find(dir); err == nil {
		p := filepath.Join(root, ".state", "bin", "aws-lambda-rie")
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	if p, err := exec.LookPath("aws-lambda-rie"); err == nil {
		return p
	}
	return ""
}

// Build cross-compiles ./functions/<name> of the repository at root into outDir/bootstrap
// with the Lambda flags of the Makefile, for linux and goarch ("" = this machine's, which
// the emulator can run). It returns the binary's path and size in bytes.
func Build(ctx context.Context, root, name, outDir, goarch string) (string, int64, error) {
	return BuildPackage(ctx, root, "./functions/"+name, outDir, goarch)
}

// BuildPackage is Build for any main package of the repository, named by its path from
// root (e.g. "./cmd/migrate", the migration function).
func BuildPackage(ctx context.Context, root, pkg, outDir, goarch string) (string, int64, error) {
	name := pkg
	if goarch == "" {
		goarch = runtime.GOARCH
	}
	out := filepath.Join(outDir, "bootstrap")
	cmd := exec.CommandContext(ctx, "go", "build", "-tags", "lambda.norpc", "-trimpath",
		"-ldflags=-s -w", "-o", out, pkg)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "GOOS=linux", "GOARCH="+goarch, "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", 0, fmt.Errorf("rie: build %s: %v\n%s", name, err, b)
	}
	fi, err := os.Stat(out)
	if err != nil {
		return "", 0, err
	}
	return out, fi.Size(), nil
}

// Options configure Start.
type Options struct {
	// Emulator is the aws-lambda-rie binary (see Binary).
	Emulator string
	// Bootstrap is the function's executable.
	Bootstrap string
	// Env is added to the emulator's environment, which it forwards to the bootstrap.
	// Nothing of the caller's environment is passed on except PATH, HOME and TMPDIR.
	Env []string
	// Timeout is the function timeout (AWS_LAMBDA_FUNCTION_TIMEOUT); default 30 s.
	Timeout time.Duration
	// Log, when set, receives the emulator's and the function's output as it comes.
	Log io.Writer
}

// Emulator is a running aws-lambda-rie with one function.
type Emulator struct {
	cmd     *exec.Cmd
	url     string
	started time.Time
	out     *syncBuffer
	done    chan struct{}
	waitErr error
}

// Start launches the emulator on two free loopback ports and waits until it accepts
// connections. Stop it with Stop.
func Start(ctx context.Context, o Options) (*Emulator, error) {
	if o.Emulator == "" || o.Bootstrap == "" {
		return nil, errors.New("rie: Emulator and Bootstrap are required")
	}
	if o.Timeout == 0 {
		o.Timeout = 30 * time.Second
	}
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ {
		e, err := start(ctx, o)
		if err == nil {
			return e, nil
		}
		lastErr = err
	}
	return nil, lastErr
}

func start(ctx context.Context, o Options) (*Emulator, error) {
	apiAddr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	runtimeAddr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	// Only the bootstrap path as argument: with more, the emulator takes the last one as
	// the handler name.
	cmd := exec.Command(o.Emulator,
		"--runtime-interface-emulator-address", apiAddr,
		"--runtime-api-address", runtimeAddr,
		"--log-level", "info",
		o.Bootstrap)
	cmd.Dir = filepath.Dir(o.Bootstrap)
	env := []string{"AWS_LAMBDA_FUNCTION_TIMEOUT=" + strconv.Itoa(int(o.Timeout.Seconds()))}
	for _, k := range []string{"PATH", "HOME", "TMPDIR"} {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	cmd.Env = append(env, o.Env...)
	out := &syncBuffer{tee: o.Log}
	cmd.Stdout, cmd.Stderr = out, out
	// Own process group: Stop ends the emulator and the bootstrap it started.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	e := &Emulator{cmd: cmd, url: "http://" + apiAddr + "/2015-03-31/functions/function/invocations",
		out: out, done: make(chan struct{})}
	e.started = time.Now()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("rie: start: %w", err)
	}
	go func() { e.waitErr = cmd.Wait(); close(e.done) }()

	deadline := time.Now().Add(60 * time.Second) // readiness: ends when the port answers
	for {
		c, err := net.DialTimeout("tcp", apiAddr, 200*time.Millisecond)
		if err == nil {
			c.Close()
			return e, nil
		}
		select {
		case <-e.done:
			return nil, fmt.Errorf("rie: emulator exited: %v\n%s", e.waitErr, out.String())
		case <-ctx.Done():
			e.Stop()
			return nil, ctx.Err()
		case <-time.After(5 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			e.Stop()
			return nil, fmt.Errorf("rie: emulator did not listen on %s\n%s", apiAddr, out.String())
		}
	}
}

// Invocation is the outcome of one invoke.
type Invocation struct {
	// Payload is the function's answer (for HTTP functions a serialized
	// APIGatewayV2HTTPResponse), or the emulator's error body.
	Payload []byte
	// Status is the emulator's HTTP status (200 when the function returned).
	Status int
	// Latency is the wall time of the invoke request, including a cold init.
	Latency time.Duration
	// SinceStart is the time from the emulator's process start to this answer: for the
	// first invoke, the cold start as a client would see it.
	SinceStart time.Duration
}

// Invoke posts payload to the function and waits for its answer.
func (e *Emulator) Invoke(ctx context.Context, payload []byte) (Invocation, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.url, bytes.NewReader(payload))
	if err != nil {
		return Invocation{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	t0 := time.Now()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return Invocation{}, fmt.Errorf("rie: invoke: %w\n%s", err, e.out.String())
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	now := time.Now()
	return Invocation{Payload: body, Status: resp.StatusCode, Latency: now.Sub(t0),
		SinceStart: now.Sub(e.started)}, err
}

// HTTPResponse is the part of an API Gateway HTTP API v2 response the checks look at.
type HTTPResponse struct {
	StatusCode      int               `json:"statusCode"`
	Headers         map[string]string `json:"headers"`
	Body            string            `json:"body"`
	IsBase64Encoded bool              `json:"isBase64Encoded"`
	Cookies         []string          `json:"cookies"`
}

// HTTP decodes the invocation as an API Gateway v2 response.
func (i Invocation) HTTP() (HTTPResponse, error) {
	var r HTTPResponse
	if i.Status != http.StatusOK {
		return r, fmt.Errorf("rie: emulator status %d: %s", i.Status, i.Payload)
	}
	if err := json.Unmarshal(i.Payload, &r); err != nil {
		return r, fmt.Errorf("rie: not an HTTP API v2 response: %w: %s", err, i.Payload)
	}
	return r, nil
}

var initRE = regexp.MustCompile(`INIT REPORT\(durationMs: ([0-9.]+)\)`)

// InitDuration is the emulator's "INIT REPORT(durationMs: …)" of the cold start: from the
// exec of the bootstrap until it asks for its first event (the function's own init work:
// config, pool, handler). The REPORT line's "Init Duration" is not used: this emulator
// initialises lazily and reports almost zero there.
func (e *Emulator) InitDuration() (time.Duration, bool) {
	m := initRE.FindStringSubmatch(e.out.String())
	if m == nil {
		return 0, false
	}
	ms, err := strconv.ParseFloat(m[1], 64)
	if err != nil {
		return 0, false
	}
	return time.Duration(ms * float64(time.Millisecond)), true
}

// Output is everything the emulator and the function printed so far.
func (e *Emulator) Output() string { return e.out.String() }

// Stop ends the emulator and the function (SIGTERM to the process group, SIGKILL after
// 2 s) and waits for it. It is safe to call more than once.
func (e *Emulator) Stop() {
	select {
	case <-e.done:
		return
	default:
	}
	pgid := -e.cmd.Process.Pid
	_ = syscall.Kill(pgid, syscall.SIGTERM)
	select {
	case <-e.done:
	case <-time.After(2 * time.Second):
		_ = syscall.Kill(pgid, syscall.SIGKILL)
		<-e.done
	}
}

func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

type syncBuffer struct {
	mu  sync.Mutex
	b   strings.Builder
	tee io.Writer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.tee != nil {
		_, _ = s.tee.Write(p)
	}
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
