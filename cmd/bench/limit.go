package main

// The limit leg: the cheapest possible hop next to the gateway's. A bare
// net/http/httputil.ReverseProxy, in a process of its own as the gateway is (this binary
// re-executed with limitProxyEnv set), stands between the same load client (leg) and the
// same upstreams — the demo upstream and server-everything — at each protocol version a
// client could speak to them; the gateway's rows sit beside them. The gateway is compared
// with the bare proxy at the version its own upstream hop speaks (the connection's
// protocol_version, read back from Postgres: 2026-07-28 for the demo upstream;
// 2025-11-25 for server-everything, which declares tasks, so the pool keeps that version),
// against the targets of docs/ARCHITECTURE.md "The proxied call's cost": p50 at c=1 at
// most 0.3 ms above the bare proxy's, at c=8 at least 0.9× its requests/s, no errors at
// c=8 and c=32.

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/agentpack/gateway/shared/auth"
	"github.com/agentpack/gateway/shared/testpeer"
	"github.com/jackc/pgx/v5"
)

// limitOnly is -only limit: the limit leg alone (main sets it).
var limitOnly bool

// limitProfile is -limitprofile: with -only limit, the gateway is built with the
// benchprofile tag (functions/mcp/cpuprofile.go) and writes one CPU profile per upstream,
// covering that upstream's gateway loads, to <prefix>-1.prof (demo upstream) and
// <prefix>-2.prof (server-everything).
var limitProfile = flag.String("limitprofile", "", "with -only limit: write the gateway's CPU profiles to <prefix>-1.prof (demo upstream) and <prefix>-2.prof (server-everything)")

// limitEnv is what the limit leg needs of the bench's setup: the running gateway, its
// token, and the two upstreams with their connection handles.
type limitEnv struct {
	dbURL, ws, gwURL, token string
	demoURL, demoHandle     string
	everythingURL, evHandle string
	concs                   []int
	gw                      *proc // the gateway's process, signalled for profiles (-limitprofile); nil: no profile
	n, warm                 int
	// catDir is the gateway's catalog directory: the policy rows (policies.go) rebuild the
	// workspace's catalog there ("" skips them).
	catDir string
	// gwPid is the gateway's process, whose CPU time (utime+stime) the leg reads to give
	// the gateway's CPU per proxied call (0: not shown).
	gwPid int
	// rate is the fixed offered rate (requests/s) of the open-loop rows (0: none).
	rate float64
	// startGateway starts another gateway process like the first on database URL dbURL
	// and returns it with its MCP URL for the workspace (nil: no database-delay row).
	startGateway func(dbURL string) (*proc, string, error)
}

// limitRate is -rate: the offered rate of the limit leg's open-loop rows.
var limitRate = flag.Float64("rate", 200, "limit leg: the fixed offered rate (requests/s) of the open-loop rows (0: none)")

// dbDelay is the delay the database-delay row adds to every Postgres round trip of the
// gateway (delayproxy.go).
const dbDelay = 500 * time.Microsecond

// newEraEcho is the echo tools/call as a 2026-07-28 client sends it: the protocol fields
// in _meta (that revision has no initialize) and the Mcp-Method / Mcp-Name headers.
func newEraEcho(l *leg, version string) {
	l.body = []byte(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hello"},` +
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"` + version + `","io.modelcontextprotocol/clientInfo":{"name":"bench","version":"1"},` +
		`"io.modelcontextprotocol/clientCapabilities":{}}}}`)
	l.hdr = map[string]string{"Mcp-Method": "tools/call", "Mcp-Name": "echo"}
}

// hopVersion is the protocol version the gateway's upstream hop for connection handle
// speaks (mcp_connections.protocol_version, stored by the install's connect).
func hopVersion(ctx context.Context, dbURL, ws, handle string) (string, error) {
	c, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		return "", err
	}
	defer c.Close(ctx)
	var v *string
	if err := c.QueryRow(ctx, `SELECT protocol_version FROM mcp_connections WHERE workspace_id = $1 AND handle = $2`,
		ws, handle).Scan(&v); err != nil {
		return "", fmt.Errorf("connection %s: %w", handle, err)
	}
	if v == nil || *v == "" {
		return "", fmt.Errorf("connection %s has no protocol version", handle)
	}
	return *v, nil
}

// runLimitLeg measures the limit leg over e and adds its rows to the table; it returns the
// verdict lines (printed after the table).
func runLimitLeg(ctx context.Context, e limitEnv) ([]string, error) {
	type upstream struct {
		what, url, handle string
		versions          []string
	}
	ups := []upstream{
		{"demo upstream", e.demoURL, e.demoHandle, []string{"2025-11-25", "2026-07-28"}},
		{"server-everything", e.everythingURL, e.evHandle, []string{"2025-03-26", "2025-11-25"}},
	}
	var verdicts []string
	plain := map[int]result{} // the demo upstream's gateway results without policies
	for ui, u := range ups {
		hop, err := hopVersion(ctx, e.dbURL, e.ws, u.handle)
		if err != nil {
			return nil, err
		}
		p, proxyURL, err := startBareProxy(u.url)
		if err != nil {
			return nil, err
		}
		legs := []*leg{}
		ref := -1
		for _, v := range u.versions {
			l := &leg{name: "bare ReverseProxy at " + v, url: proxyURL, version: v,
				body: []byte(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hello"}}}`)}
			if v >= "2026-07-28" {
				newEraEcho(l, v)
			} else if u.what == "server-everything" {
				if err := l.initSession(); err != nil {
					p.stop()
					return nil, fmt.Errorf("%s through the bare proxy: %w", u.what, err)
				}
			}
			if v == hop {
				ref = len(legs)
			}
			legs = append(legs, l)
		}
		if ref < 0 {
			p.stop()
			return nil, fmt.Errorf("%s: the gateway's hop speaks %s, which no bare-proxy leg does", u.what, hop)
		}
		gw := &leg{name: "gateway (upstream hop at " + hop + ")", url: e.gwURL, token: e.token,
			body: []byte(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"mcp_` + u.handle + `_echo","arguments":{"message":"hello"}}}`)}
		legs = append(legs, gw)
		if e.gw != nil {
			_ = syscall.Kill(e.gw.cmd.Process.Pid, syscall.SIGUSR1)
		}
		v := limitVerdict{upstream: u.what, version: hop, dP50: map[int]time.Duration{}, ratio: map[int]float64{}, errs: map[int]int64{}}
		v.cpu = map[int]time.Duration{}
		for _, c := range e.concs {
			for _, l := range legs {
				l.load(e.warm, c)
			}
			// After the warm-up: the Postgres backends the gateway's pool opened for it count.
			watch := newCPUWatch(ctx, e.dbURL, map[string]int{"gateway": e.gwPid, "bare proxy": p.cmd.Process.Pid})
			var cpu0 time.Duration
			if e.gwPid != 0 {
				cpu0 = procCPU(e.gwPid)
			}
			rs := loadInterleaved(legs, e.n, c, watch)
			if e.gwPid != 0 {
				v.cpu[c] = (procCPU(e.gwPid) - cpu0) / time.Duration(max(e.n/limitRounds, c)*limitRounds)
			}
			base := rs[ref]
			for i, r := range rs {
				note := fmt.Sprintf("%d requests over loopback HTTP in %d rounds interleaved with the other rows, protocol %s", e.n, limitRounds, cmpOr(legs[i].version, protocolVersion))
				if legs[i] == gw {
					if ui == 0 {
						plain[c] = r
					}
					d := r.p50 - base.p50
					v.dP50[c], v.ratio[c], v.errs[c] = d, r.rps/base.rps, r.errors
					note = fmt.Sprintf("client at %s; p50 %+.3f ms over the bare proxy at %s, %.2f× its req/s",
						protocolVersion, float64(d.Microseconds())/1000, hop, r.rps/base.rps)
					if cpu, ok := v.cpu[c]; ok {
						note += fmt.Sprintf("; gateway CPU %s ms per call", ms(cpu))
					}
				}
				if r.cpu != "" {
					note += "; " + r.cpu
				}
				if r.errors > 0 {
					note += fmt.Sprintf("; first error: %.120s", r.firstErr)
				}
				add(row{what: fmt.Sprintf("limit leg, echo tools/call (%s), %s, concurrency %d", u.what, r.name, c),
					p50: ms(r.p50) + " ms", p99: ms(r.p99) + " ms", rps: fmt.Sprintf("%.0f", r.rps),
					note: note + fmt.Sprintf("; errors %d", r.errors)})
			}
		}
		if e.rate > 0 {
			pair := []*leg{legs[ref], gw}
			rs := openLoopInterleaved(pair, e.rate, e.n)
			v.rate, v.openBare, v.openGW = e.rate, rs[0], rs[1]
			for _, r := range rs {
				add(row{what: fmt.Sprintf("limit leg, echo tools/call (%s), %s, open loop at %.0f req/s", u.what, r.name, e.rate),
					p50: ms(r.p50) + " ms", p99: ms(r.p99) + " ms", rps: fmt.Sprintf("%.0f", r.rps),
					note: fmt.Sprintf("%d requests offered at a fixed rate (latency from each request's due time), %d rounds interleaved; errors %d", e.n, limitRounds, r.errors)})
			}
		}
		if ui == 0 && e.startGateway != nil {
			if err := delayRows(ctx, e, &v, legs[ref], gw); err != nil {
				p.stop()
				return nil, err
			}
		}
		p.stop()
		if e.gw != nil {
			if err := stopProfile(e.gw, fmt.Sprintf("%s-%d.prof", *limitProfile, ui+1)); err != nil {
				return nil, err
			}
		}
		for _, line := range v.lines() {
			verdicts = append(verdicts, fmt.Sprintf("%s, hop at %s: %s", u.what, hop, line))
		}
	}
	lines, err := runPolicyLeg(ctx, e, plain)
	if err != nil {
		return nil, err
	}
	verdicts = append(verdicts, lines...)
	return verdicts, nil
}

// stopProfile ends the gateway's running CPU profile and waits (≤ 10 s) until file is
// complete.
func stopProfile(gw *proc, file string) error {
	_ = syscall.Kill(gw.cmd.Process.Pid, syscall.SIGUSR2)
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(file + ".done"); err == nil {
			_ = os.Remove(file + ".done")
			fmt.Fprintln(os.Stderr, "bench: gateway CPU profile", file)
			return nil
		}
	}
	return fmt.Errorf("the gateway wrote no profile %s (built with -tags benchprofile?)", file)
}

// runLimitOnly is -only limit: builds the gateway and the demo upstream, sets up the bench
// workspace with both upstreams (as run does), starts one gateway and measures the limit
// leg alone.
func runLimitOnly(ctx context.Context, base, dir string, n, warm int, concs []int) error {
	if len(concs) == 0 {
		return fmt.Errorf("no concurrency level in -c")
	}
	gwBin, localBin, err := build(dir)
	if err != nil {
		return err
	}
	var gwEnv []string
	if *limitProfile != "" {
		c := exec.Command("go", "build", "-tags", "benchprofile", "-trimpath", "-o", gwBin, "./functions/mcp")
		c.Stderr, c.Env = os.Stderr, append(os.Environ(), "CGO_ENABLED=0")
		if err := c.Run(); err != nil {
			return fmt.Errorf("build the profiling gateway: %w", err)
		}
		prefix, err := filepath.Abs(*limitProfile)
		if err != nil {
			return err
		}
		*limitProfile = prefix
		gwEnv = append(gwEnv, "AGENTPACK_CPU_PROFILE="+prefix)
	}
	gwPort := freePort()
	up, demoURL, err := startDemoUpstream(localBin)
	if err != nil {
		return err
	}
	defer up.stop()
	catDir := filepath.Join(dir, "catalog")
	e := limitEnv{demoURL: demoURL, concs: concs, n: n, warm: warm, catDir: catDir}
	benchDB = "agentpack_bench_limit" // a full bench may run meanwhile
	if e.dbURL, e.ws, e.demoHandle, err = setup(ctx, base, e.demoURL, catDir); err != nil {
		return err
	}
	tb := &benchTB{}
	defer tb.cleanup()
	e.everythingURL = testpeer.Everything(tb, "streamable")
	if e.evHandle, err = install(ctx, e.dbURL, e.ws, catDir, "Everything", e.everythingURL); err != nil {
		return err
	}
	e.token, _ = auth.Mint(secret, auth.Principal{Subject: "bench", Role: auth.RoleAdmin, Workspaces: []string{e.ws}}, time.Hour)
	gw, err := start(gwBin, append(gwEnv, "DATABASE_URL="+e.dbURL, "JWT_SECRET="+secret, "CATALOG_DIR="+catDir,
		"PORT="+gwPort, "LOG_LEVEL=warn", "APP_ENV=local", "ALLOW_PRIVATE_UPSTREAMS=true"))
	if err != nil {
		return err
	}
	defer gw.stop()
	e.gwPid, e.rate = gw.cmd.Process.Pid, *limitRate
	e.startGateway = gatewayStarter(gwBin, e.ws, []string{"JWT_SECRET=" + secret, "CATALOG_DIR=" + catDir,
		"LOG_LEVEL=warn", "APP_ENV=local", "ALLOW_PRIVATE_UPSTREAMS=true"})
	if *limitProfile != "" {
		e.gw = gw
	}
	if err := waitHTTP("127.0.0.1:"+gwPort, 10*time.Second); err != nil {
		return err
	}
	e.gwURL = "http://127.0.0.1:" + gwPort + "/mcp/" + e.ws
	fmt.Fprintln(os.Stderr, "bench: limit leg…")
	verdicts, err := runLimitLeg(ctx, e)
	if err != nil {
		return err
	}
	printTable()
	printVerdicts(verdicts)
	return nil
}

// gatewayStarter returns a limitEnv.startGateway: gwBin on a free port with env and the
// given DATABASE_URL, once it listens (10 s), and its MCP URL for workspace ws.
func gatewayStarter(gwBin, ws string, env []string) func(string) (*proc, string, error) {
	return func(dbURL string) (*proc, string, error) {
		port := freePort()
		g, err := start(gwBin, append(slices.Clone(env), "DATABASE_URL="+dbURL, "PORT="+port))
		if err != nil {
			return nil, "", err
		}
		if err := waitHTTP("127.0.0.1:"+port, 10*time.Second); err != nil {
			g.stop()
			return nil, "", err
		}
		return g, "http://127.0.0.1:" + port + "/mcp/" + ws, nil
	}
}

// parseConcs is the -c list: positive integers, others skipped.
func parseConcs(list string) []int {
	var out []int
	for _, s := range strings.Split(list, ",") {
		if c, err := strconv.Atoi(strings.TrimSpace(s)); err == nil && c > 0 {
			out = append(out, c)
		}
	}
	return out
}
