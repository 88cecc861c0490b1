package main

// The printed table: the rows every leg adds, and the in-process Go benchmarks (go test
// -bench) read into rows.

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
)

// row is one line of the final table.
type row struct {
	what, p50, p99, rps, allocs, bytes, note string
}

var table []row

func add(r row) { table = append(table, r) }

func printTable() {
	fmt.Printf("\n| measurement | p50 | p99 | req/s | allocs/op | B/op | notes |\n|---|---|---|---|---|---|---|\n")
	for _, r := range table {
		fmt.Printf("| %s | %s | %s | %s | %s | %s | %s |\n", r.what, r.p50, r.p99, r.rps, r.allocs, r.bytes, r.note)
	}
}

// goBench runs the in-process benchmarks of the gateway, rate limiter and db packages (go
// test -bench -benchmem) and adds their rows.
func goBench(dbURL, benchtime string) error {
	cmd := exec.Command("go", "test", "-run", "^$", "-bench", ".", "-benchmem", "-benchtime", benchtime, "-count", "1",
		"./functions/mcp/gateway/", "./shared/ratelimit/", "./shared/policy/", "./shared/db/")
	cmd.Env = append(os.Environ(), "TEST_DATABASE_URL="+dbURL, "REQUIRE_DB=1")
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("go test -bench: %w\n%s", err, out)
	}
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") {
			continue
		}
		m := map[string]string{}
		for i := 2; i+1 < len(f); i += 2 {
			m[f[i+1]] = f[i]
		}
		nsf := func(k string) string {
			v, err := strconv.ParseFloat(m[k], 64)
			if err != nil {
				return "?"
			}
			return fmt.Sprintf("%.3f ms", v/1e6)
		}
		name := strings.TrimPrefix(f[0], "Benchmark")
		if i := strings.LastIndex(name, "-"); i > 0 {
			name = name[:i]
		}
		ns, _ := strconv.ParseFloat(m["ns/op"], 64)
		note := "in process, full handler"
		if strings.HasPrefix(name, "ProxiedEchoRateLimit") {
			// a proxied call with and without a limit (docs/RATE-LIMITS.md, "Cost"); at c=8
			// ns/op is wall time per call, the inverse of the throughput
			note = "proxied echo through the full handler, with/without a rate limit"
		}
		if strings.HasPrefix(name, "PolicyDecide") {
			// one access-policy decision with 50 policies (docs/POLICIES.md "Cost"; target p50 ≤ 20 µs)
			note = fmt.Sprintf("one call decision, 50 access policies; p50 %.1f µs (target ≤ 20 µs)", mustFloat(m["p50-ns"])/1000)
		}
		if strings.HasPrefix(name, "LimiterTake") {
			// the rate limiter alone (docs/RATE-LIMITS.md): one statement per proxied call
			note = "rate limiter per call, one Postgres round trip; " + m["ns/call-per-caller"] + " ns/call per caller"
		}
		if strings.HasPrefix(name, "StatementMode") {
			// the query mode's cost per statement (docs/DATABASE.md): named prepared
			// statements (pgx's default, pins an RDS Proxy session) against cache-describe
			note = "one statement of the call path, one connection; cache-describe is db.Open's mode"
		}
		if b := m["resp-B"]; b != "" {
			note += ", response " + b + " B"
		}
		add(row{what: "go bench " + name, p50: nsf("p50-ns"), p99: nsf("p99-ns"), rps: fmt.Sprintf("%.0f", 1e9/ns),
			allocs: m["allocs/op"], bytes: m["B/op"], note: note})
	}
	return nil
}

func mustFloat(s string) float64 {
	v, _ := strconv.ParseFloat(s, 64)
	return v
}
