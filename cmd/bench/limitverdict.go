package main

// The limit leg's verdicts: the gateway compared with the bare proxy at its hop's version,
// against the targets, and their printing.

import (
	"fmt"
	"time"
)

// limitVerdict is the comparison of the gateway with the bare proxy at its hop's version.
type limitVerdict struct {
	upstream string
	version  string
	dP50     map[int]time.Duration // gateway p50 − bare p50, by concurrency
	ratio    map[int]float64       // gateway req/s ÷ bare req/s
	errs     map[int]int64         // gateway errors
	// open is the open-loop comparison at rate: gateway and bare results (zero: not run).
	rate              float64
	openGW, openBare  result
	delayed, delayRef *result // c=1 with dbDelay on every Postgres round trip, and its bare leg
	cpu               map[int]time.Duration
}

// verdictLines renders v against the targets (c=1 p50 delta ≤ 0.3 ms, c=8 ratio ≥ 0.9,
// no errors at c=8 and c=32); a concurrency not measured is "not run".
func (v limitVerdict) lines() []string {
	mark := func(ok bool) string {
		if ok {
			return "met"
		}
		return "MISSED"
	}
	var out []string
	if d, ok := v.dP50[1]; ok {
		out = append(out, fmt.Sprintf("c=1 p50 %+.3f ms over the bare proxy (target ≤ +0.300): %s",
			float64(d.Microseconds())/1000, mark(d <= 300*time.Microsecond)))
	} else {
		out = append(out, "c=1: not run")
	}
	if r, ok := v.ratio[8]; ok {
		out = append(out, fmt.Sprintf("c=8 throughput %.2f× the bare proxy's (target ≥ 0.90×): %s", r, mark(r >= 0.9)))
	} else {
		out = append(out, "c=8: not run")
	}
	for _, c := range []int{8, 32} {
		if e, ok := v.errs[c]; ok {
			out = append(out, fmt.Sprintf("c=%d errors %d (target 0): %s", c, e, mark(e == 0)))
		} else {
			out = append(out, fmt.Sprintf("c=%d: not run", c))
		}
	}
	if v.rate > 0 {
		d := v.openGW.p99 - v.openBare.p99
		held := ""
		if v.openBare.rps < 0.95*v.rate {
			held = fmt.Sprintf(" (the bare proxy achieved only %.0f/s: pick a lower -rate)", v.openBare.rps)
		}
		out = append(out, fmt.Sprintf("open loop at %.0f req/s: p99 %s vs %s ms, added %+.3f ms (target ≤ +1.000), errors %d: %s%s",
			v.rate, ms(v.openGW.p99), ms(v.openBare.p99), float64(d.Microseconds())/1000, v.openGW.errors,
			mark(d <= time.Millisecond && v.openGW.errors == 0), held))
	}
	if v.delayed != nil {
		d := v.delayed.p50 - v.delayRef.p50
		out = append(out, fmt.Sprintf("c=1 with %s added to every Postgres round trip: p50 %+.3f ms over the bare proxy (target ≤ +0.500), errors %d: %s",
			dbDelay, float64(d.Microseconds())/1000, v.delayed.errors, mark(d <= 500*time.Microsecond && v.delayed.errors == 0)))
	}
	for _, c := range []int{1, 8} {
		if d, ok := v.cpu[c]; ok {
			out = append(out, fmt.Sprintf("gateway CPU per proxied call at c=%d: %s ms (no target; the process's utime+stime over the interleaved run ÷ its calls)", c, ms(d)))
		}
	}
	return out
}

func printVerdicts(lines []string) {
	if len(lines) == 0 {
		return
	}
	fmt.Println("\nLimit leg against its targets (gateway vs. a bare httputil.ReverseProxy at the gateway's upstream version):")
	for _, l := range lines {
		fmt.Println("- " + l)
	}
}
