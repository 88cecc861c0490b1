package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/agentpack/gateway/shared/catalog"
	"github.com/agentpack/gateway/shared/db"
	"github.com/agentpack/gateway/shared/policy"
)

// The limit leg's policy rows (docs/POLICIES.md "Cost"): the demo upstream's gateway leg
// once more after the bench workspace got policy.SampleDocument's 50 access policies (plus
// one probe policy, below), so that the table shows a proxied call's cost with and without
// them, measured the same way against the same gateway process.

// probePolicy denies a call whose arguments hold "benchProbe": the leg waits until the
// gateway denies such a call, i.e. until its catalog cache holds the new policies.
const probePolicy = `@id("bench-probe") forbid(principal, action == Action::"call", resource) when { context.arguments has benchProbe };`

// setPolicies stores text as workspace ws's policies and rebuilds its catalog in catDir,
// as PUT /api/policies does ("" removes them).
func setPolicies(ctx context.Context, dbURL, ws, catDir, text string) error {
	pool, err := db.Open(ctx, dbURL, 2)
	if err != nil {
		return err
	}
	defer pool.Close()
	if _, err := db.AccessPolicyPut(ctx, pool, &ws, text, "bench"); err != nil {
		return err
	}
	return catalog.Rebuild(ctx, pool, &catalog.DiskStore{Dir: catDir}, []string{ws})
}

// waitPolicies polls the gateway with the probe call until it is denied (want) or answered
// (!want), ≤ 30 s (the gateway's catalog TTL is 5 s).
func waitPolicies(gwURL, token, tool string, want bool) error {
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"` + tool + `","arguments":{"message":"x","benchProbe":true}}}`
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(250 * time.Millisecond) {
		req, _ := http.NewRequest(http.MethodPost, gwURL, bytes.NewReader([]byte(body)))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Mcp-Protocol-Version", protocolVersion)
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if strings.Contains(string(b), "bench-probe") == want {
			return nil
		}
	}
	return fmt.Errorf("the gateway did not pick up the policies within 30 s")
}

// runPolicyLeg measures the demo upstream's echo through the gateway at each concurrency
// with the policies and then without them again (A/B/A with the gateway leg before it, so
// that warm-up and the machine's drift show; before: that leg's results by concurrency).
func runPolicyLeg(ctx context.Context, e limitEnv, before map[int]result) error {
	if e.catDir == "" {
		return nil
	}
	fmt.Fprintln(os.Stderr, "bench: limit leg with 50 access policies…")
	tool := "mcp_" + e.demoHandle + "_echo"
	if err := setPolicies(ctx, e.dbURL, e.ws, e.catDir, policy.SampleDocument(e.demoHandle)+probePolicy+"\n"); err != nil {
		return fmt.Errorf("install policies: %w", err)
	}
	if err := waitPolicies(e.gwURL, e.token, tool, true); err != nil {
		return err
	}
	with := map[int]result{}
	if err := policyRows(e, tool, "gateway with 50 access policies", before, with); err != nil {
		return err
	}
	if err := setPolicies(ctx, e.dbURL, e.ws, e.catDir, ""); err != nil {
		return fmt.Errorf("remove policies: %w", err)
	}
	if err := waitPolicies(e.gwURL, e.token, tool, false); err != nil {
		return err
	}
	return policyRows(e, tool, "gateway without policies again", with, nil)
}

// policyRows measures one gateway leg of the policy rows and adds them, compared with
// ref's results; out (when not nil) gets the results by concurrency.
func policyRows(e limitEnv, tool, name string, ref, out map[int]result) error {
	gw := &leg{name: name, url: e.gwURL, token: e.token,
		body: []byte(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"` + tool + `","arguments":{"message":"hello"}}}`)}
	for _, c := range e.concs {
		gw.load(e.warm, c)
		r := gw.load(e.n, c)
		if out != nil {
			out[c] = r
		}
		note := fmt.Sprintf("%d requests", e.n)
		if b, ok := ref[c]; ok {
			note += fmt.Sprintf("; p50 %+.3f ms and %.2f× the req/s of the row before", float64((r.p50-b.p50).Microseconds())/1000, r.rps/b.rps)
		}
		if r.errors > 0 {
			note += fmt.Sprintf("; first error: %.120s", r.firstErr)
		}
		add(row{what: fmt.Sprintf("limit leg, echo tools/call (demo upstream), %s, concurrency %d", gw.name, c),
			p50: ms(r.p50) + " ms", p99: ms(r.p99) + " ms", rps: fmt.Sprintf("%.0f", r.rps), note: note + fmt.Sprintf("; errors %d", r.errors)})
	}
	return nil
}
