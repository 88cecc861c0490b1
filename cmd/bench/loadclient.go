package main

// The load client: one MCP session per leg (leg), its requests over loopback, and a load of
// n requests at a concurrency measured into a result.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tmaxmax/go-sse"
)

type leg struct {
	name    string
	url     string
	token   string
	body    []byte
	version string            // Mcp-Protocol-Version ("" = protocolVersion)
	session string            // Mcp-Session-Id of a stateful upstream's session (see initSession)
	hdr     map[string]string // further request headers (a 2026-07-28 call's Mcp-Method, Mcp-Name)
}

// initSession opens a session on a stateful upstream at l.version (initialize, then
// notifications/initialized) for the direct leg, as any client of it would once.
func (l *leg) initSession() error {
	body := l.body
	l.body = []byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"` + l.version +
		`","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}`)
	req, _ := http.NewRequest(http.MethodPost, l.url, bytes.NewReader(l.body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	l.session = resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != 200 || l.session == "" {
		return fmt.Errorf("initialize: status %d, session %q", resp.StatusCode, l.session)
	}
	req, _ = http.NewRequest(http.MethodPost, l.url, strings.NewReader(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", l.session)
	req.Header.Set("Mcp-Protocol-Version", l.version)
	if resp, err = client.Do(req); err != nil {
		return err
	}
	resp.Body.Close()
	l.body = body
	return nil
}

var client = &http.Client{Transport: &http.Transport{MaxIdleConns: 256, MaxIdleConnsPerHost: 256, IdleConnTimeout: time.Minute}}

func (l *leg) do() error {
	req, _ := http.NewRequest(http.MethodPost, l.url, bytes.NewReader(l.body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	v := l.version
	if v == "" {
		v = protocolVersion
	}
	req.Header.Set("Mcp-Protocol-Version", v)
	if l.session != "" {
		req.Header.Set("Mcp-Session-Id", l.session)
	}
	if l.token != "" {
		req.Header.Set("Authorization", "Bearer "+l.token)
	}
	for k, v := range l.hdr {
		req.Header.Set(k, v)
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return err
	}
	if resp.StatusCode != 200 {
		return fmt.Errorf("status %d: %.200s", resp.StatusCode, b)
	}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		b = lastEventData(b)
	}
	// Only the top level counts: tool schemas in a tools/list mention "error" too.
	var msg struct {
		Error  json.RawMessage `json:"error"`
		Result *struct {
			IsError bool `json:"isError"`
		} `json:"result"`
	}
	if err := json.Unmarshal(b, &msg); err != nil {
		return fmt.Errorf("answer is not JSON: %.200s", b)
	}
	if msg.Error != nil || msg.Result == nil || msg.Result.IsError {
		return fmt.Errorf("error answer: %.200s", b)
	}
	return nil
}

// lastEventData returns the data of the last event of an SSE body that has data (blank
// data, e.g. a priming event, does not count), read with go-sse as shared/mcpclient does;
// nil when there is none or the body is not a readable event stream.
func lastEventData(b []byte) []byte {
	var last []byte
	for ev, err := range sse.Read(bytes.NewReader(b), &sse.ReadConfig{MaxEventSize: len(b) + 1}) {
		if err != nil {
			break
		}
		if strings.TrimSpace(ev.Data) != "" {
			last = []byte(ev.Data)
		}
	}
	return last
}

type result struct {
	name     string
	conc     int
	p50, p99 time.Duration
	rps      float64
	errors   int64
	firstErr string
	// cpu is the CPU per call of each process group (loadInterleaved with a cpuWatch); "": not measured.
	cpu string
}

func (l *leg) load(n, conc int) result {
	lat := make([]time.Duration, n)
	var next, errs atomic.Int64
	var firstErr atomic.Value
	var wg sync.WaitGroup
	t0 := time.Now()
	for w := 0; w < conc; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(1) - 1
				if i >= int64(n) {
					return
				}
				s := time.Now()
				if err := l.do(); err != nil {
					errs.Add(1)
					firstErr.CompareAndSwap(nil, err.Error())
				}
				lat[i] = time.Since(s)
			}
		}()
	}
	wg.Wait()
	el := time.Since(t0)
	slices.Sort(lat)
	r := result{name: l.name, conc: conc, p50: lat[n/2], p99: lat[n*99/100], rps: float64(n) / el.Seconds(), errors: errs.Load()}
	if v := firstErr.Load(); v != nil {
		r.firstErr = v.(string)
	}
	return r
}

func ms(d time.Duration) string { return fmt.Sprintf("%.3f", float64(d.Microseconds())/1000) }
