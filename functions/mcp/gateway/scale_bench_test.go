package gateway_test

import (
	"context"
	"encoding/json"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/agentpack/gateway/functions/mcp/gateway"
	"github.com/agentpack/gateway/shared/catalog"
	"github.com/google/uuid"
)

// scaleConnections returns n synthetic connections of perConn tools each (realistic input
// schemas), as a workspace of many installed servers holds them. They have no rows in
// Postgres: nothing on a call of another connection may need them.
func scaleConnections(n, perConn int) []catalog.Connection {
	out := make([]catalog.Connection, 0, n)
	for c := range n {
		conn := catalog.Connection{ID: uuid.NewString(), Name: fmt.Sprintf("Server %d", c), Handle: fmt.Sprintf("srv%d", c),
			Scope: "workspace", Source: "manual", URL: "http://127.0.0.1:9/mcp", TransportType: "streamable-http",
			UpdatedAt: time.Now().UTC()}
		for i := range perConn {
			name := fmt.Sprintf("tool_%d", i)
			conn.Tools = append(conn.Tools, catalog.Tool{ExposedName: "mcp_" + conn.Handle + "_" + name, UpstreamName: name,
				Title:       "Tool " + name,
				Description: "Does thing number " + name + " to the resource identified by id, returning the updated resource as JSON.",
				InputSchema: json.RawMessage(`{"type":"object","properties":{"id":{"type":"string","description":"resource id"},` +
					`"limit":{"type":"integer","minimum":1,"maximum":100},"query":{"type":"string","maxLength":200}},"required":["id"]}`),
				Annotations: json.RawMessage(`{"readOnlyHint":true}`)})
		}
		out = append(out, conn)
	}
	return out
}

// processCPU is the process's user+system CPU time so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkProxiedScale is one proxied tools/call (the demo upstream's echo, audit row
// included) in a workspace of 1 and of 1,000 connections × 20 tools, under the gateway's
// own runtime settings (TuneRuntime). cpu-ns/op is the process's CPU per call (gateway and
// the in-process stub upstream; Postgres is another process): issue 23's target is the
// 1,000-connection figure ≤ 1.1× the 1-connection one. Each run first serves a full
// tools/list so that the workspace's tables exist, as a client's session would.
//
//	go test -run '^$' -bench ProxiedScale -count 5 ./functions/mcp/gateway
func BenchmarkProxiedScale(b *testing.B) {
	gateway.TuneRuntime()
	for _, n := range []int{1, 1000} {
		b.Run(fmt.Sprintf("connections=%d", n), func(b *testing.B) {
			c := newChurnEnv(b, 0)
			doc := c.base
			doc.Connections = append(append([]catalog.Connection(nil), c.base.Connections...), scaleConnections(n-1, 20)...)
			data, _ := json.Marshal(doc)
			if _, err := putDoc(c.store, data); err != nil {
				b.Fatal(err)
			}
			c.cache.Invalidate(c.ws)
			c.list.check(b, c.handler)
			cpu0 := processCPU()
			c.call.run(b, c.handler)
			b.ReportMetric(float64((processCPU()-cpu0).Nanoseconds())/float64(b.N), "cpu-ns/op")
			b.ReportMetric(float64(len(data)), "catalog-B")
		})
	}
}

// BenchmarkToolsSearch is agentpack_tools_search through the whole handler in a workspace
// of 1,000 connections × 20 tools (20,000 tools; issue 23's target is ≤ 5 ms a query),
// for a query matching one tool and one matching 1,000 (a tool name shared by every
// server). The index is built by the warm-up (once per catalog snapshot).
func BenchmarkToolsSearch(b *testing.B) {
	c := newChurnEnv(b, 0)
	doc := c.base
	doc.Connections = append(append([]catalog.Connection(nil), c.base.Connections...), scaleConnections(1000, 20)...)
	data, _ := json.Marshal(doc)
	if _, err := putDoc(c.store, data); err != nil {
		b.Fatal(err)
	}
	c.cache.Invalidate(c.ws)
	for _, q := range []string{"echo back the message", "tool_7 resource"} {
		b.Run(q, func(b *testing.B) {
			rq := c.list
			rq.body = `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"agentpack_tools_search","arguments":{"query":` +
				mustJSON(q) + `,"limit":10}}}`
			rq.run(b, c.handler)
		})
	}
}

// putDoc stores a whole catalog document given as JSON (its parts, then its index), as a
// rebuild would have.
func putDoc(store catalog.Store, data []byte) (string, error) {
	doc, err := catalog.Decode(data)
	if err != nil {
		return "", err
	}
	return catalog.WriteDocument(context.Background(), store, doc)
}
