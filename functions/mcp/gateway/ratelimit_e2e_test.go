package gateway_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentpack/gateway/cmd/local/stacktest"
	"github.com/agentpack/gateway/shared/auth"
	"github.com/agentpack/gateway/shared/testpeer"
)

// limitEnv is a stack with one workspace, its admin, a streamable Go fixture installed as
// a connection, and the exposed name of the fixture's echo tool.
type limitEnv struct {
	env       *stacktest.Env
	ws, admin string
	connID    string
	echo, add string
	up        *testpeer.Fixture
}

func newLimitEnv(t *testing.T) *limitEnv {
	t.Helper()
	up := testpeer.NewFixture(t, nil)
	bundle := setupWith(t, "Limits", "Limited", up.URL)
	env, ws, admin, c := bundle.env, bundle.ws, bundle.admin, bundle.conn
	return &limitEnv{env: env, ws: ws, admin: admin, connID: c.ID, echo: "mcp_" + c.Handle + "_echo", add: "mcp_" + c.Handle + "_add", up: up}
}

// setLimit sets a limit through REST (admin) and returns its id.
func (e *limitEnv) setLimit(t *testing.T, body map[string]any) string {
	t.Helper()
	body["workspaceId"] = e.ws
	status, out := e.env.Do(t, "POST", "/api/rate-limits", e.admin, body)
	if status != http.StatusCreated && status != http.StatusOK {
		t.Fatalf("set limit: %d %s", status, out)
	}
	var l struct{ ID string }
	_ = json.Unmarshal(out, &l)
	return l.ID
}

// limitOutcome is what one tools/call answered: ok (a result without isError), or the
// envelope's error code, retryable flag and details.
type limitOutcome struct {
	OK        bool
	Code      string
	Retryable bool
	Details   map[string]any
	Raw       string
}

// call sends one tools/call of tool to base's aggregate endpoint as token.
func (e *limitEnv) call(t *testing.T, base, token, tool string) limitOutcome {
	t.Helper()
	args := `{"message":"hi"}`
	if strings.HasSuffix(tool, "_add") {
		args = `{"a":1,"b":2}`
	}
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"` + tool + `","arguments":` + args + `}}`
	req, _ := http.NewRequest(http.MethodPost, base+"/mcp/"+e.ws, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Errorf("call: %v", err)
		return limitOutcome{}
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var m struct {
		Result *struct {
			IsError           bool `json:"isError"`
			StructuredContent *struct {
				Error *struct {
					Code      string         `json:"code"`
					Retryable bool           `json:"retryable"`
					Details   map[string]any `json:"details"`
				} `json:"error"`
			} `json:"structuredContent"`
		} `json:"result"`
	}
	if err := json.Unmarshal(raw, &m); err != nil || m.Result == nil {
		t.Errorf("call %s: not a result: %s", tool, raw)
		return limitOutcome{Raw: string(raw)}
	}
	out := limitOutcome{OK: !m.Result.IsError, Raw: string(raw)}
	if sc := m.Result.StructuredContent; sc != nil && sc.Error != nil {
		out.Code, out.Retryable, out.Details = sc.Error.Code, sc.Error.Retryable, sc.Error.Details
	}
	return out
}

// upstreamCalls counts the tools/call requests of tool (its upstream name) the fixture got.
func (e *limitEnv) upstreamCalls(tool string) int {
	return e.up.CountRequests("POST", `"name":"`+tool+`"`)
}

// TestRateLimitHoldsAcrossInstances (issue 24 item 2): three gateway instances over one
// database (separate handlers, pools, caches) take 36 concurrent calls against a limit
// of 10 per minute. The documented accuracy (docs/RATE-LIMITS.md) is exact: a window never
// admits more than its limit, and a refused call costs nothing. So: every minute window
// the calls fell into admitted at most 10; when all fell into one window, exactly 10 were
// admitted; the upstream saw exactly the admitted calls; every other call answered
// RATE_LIMITED, retryable, with retryAfterSeconds in 1..60.
func TestRateLimitHoldsAcrossInstances(t *testing.T) {
	t.Parallel()
	e := newLimitEnv(t)
	const limit, perInstance = 10, 12
	id := e.setLimit(t, map[string]any{"tool": e.echo, "perMinute": limit})
	bases := []string{e.env.URL, e.env.Instance(t, nil), e.env.Instance(t, nil)}
	// Warm each instance (catalog, upstream session) with a call of another tool.
	for _, b := range bases {
		if o := e.call(t, b, e.admin, e.add); !o.OK {
			t.Fatalf("warm-up on %s: %s", b, o.Raw)
		}
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var outs []limitOutcome
	start := make(chan struct{})
	for _, b := range bases {
		for range perInstance {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				o := e.call(t, b, e.admin, e.echo)
				mu.Lock()
				outs = append(outs, o)
				mu.Unlock()
			}()
		}
	}
	close(start)
	wg.Wait()
	ok := 0
	for _, o := range outs {
		switch {
		case o.OK:
			ok++
		case o.Code != "RATE_LIMITED" || !o.Retryable:
			t.Errorf("refusal is not RATE_LIMITED and retryable: %s", o.Raw)
		default:
			secs, _ := o.Details["retryAfterSeconds"].(float64)
			if secs < 1 || secs > 60 || o.Details["window"] != "minute" || o.Details["limit"] != float64(limit) || o.Details["limitId"] != id {
				t.Errorf("refusal details: %v", o.Details)
			}
		}
	}
	// The windows the calls fell into, as the counters recorded them.
	rows, err := e.env.Pool.Query(context.Background(), `SELECT count FROM rate_limit_counters WHERE limit_id = $1 AND window_kind = 'minute'`, id)
	if err != nil {
		t.Fatal(err)
	}
	var counts []int
	sum := 0
	for rows.Next() {
		var n int
		_ = rows.Scan(&n)
		counts = append(counts, n)
		sum += n
	}
	rows.Close()
	for _, n := range counts {
		if n > limit {
			t.Errorf("a minute window admitted %d calls, limit %d", n, limit)
		}
	}
	if sum != ok {
		t.Errorf("counters hold %d calls, %d were admitted", sum, ok)
	}
	if len(counts) == 1 && ok != limit {
		t.Errorf("one window: %d admitted, want exactly %d", ok, limit)
	}
	if n := e.upstreamCalls("echo"); n != ok {
		t.Errorf("upstream got %d echo calls, %d were admitted", n, ok)
	}
	if !strings.Contains(e.env.Metrics.String(), `"outcome":"refused"`) || !strings.Contains(e.env.Metrics.String(), `"RateLimitDecisions":1`) {
		t.Errorf("no refused RateLimitDecisions metric line")
	}
	t.Logf("%d calls over %d instances, %d admitted, windows %v", len(outs), len(bases), ok, counts)
}

// TestRateLimitScopes: a per-member limit gives each caller a bucket; a limit on one member
// leaves the others alone; a connection limit covers each of its tools; a day quota
// refuses with window "day"; a refused call reaches no upstream; deleting the limit lifts
// it; the list shows usage.
func TestRateLimitScopes(t *testing.T) {
	t.Parallel()
	e := newLimitEnv(t)
	bob := stacktest.Token(t, "bob", auth.RoleMember, e.ws)
	carol := stacktest.Token(t, "carol", auth.RoleMember, e.ws)

	t.Run("per member", func(t *testing.T) {
		id := e.setLimit(t, map[string]any{"tool": e.echo, "principal": "*", "perMinute": 2})
		defer e.env.Do(t, "DELETE", "/api/rate-limits/"+id+"?workspaceId="+e.ws, e.admin, nil)
		earlyInMinute(t)
		for i := range 2 {
			if o := e.call(t, e.env.URL, bob, e.echo); !o.OK {
				t.Fatalf("bob call %d: %s", i, o.Raw)
			}
		}
		before := e.upstreamCalls("echo")
		if o := e.call(t, e.env.URL, bob, e.echo); o.Code != "RATE_LIMITED" {
			t.Fatalf("bob's third call: %s", o.Raw)
		}
		if n := e.upstreamCalls("echo") - before; n != 0 {
			t.Errorf("the refused call reached the upstream (%d requests)", n)
		}
		if o := e.call(t, e.env.URL, carol, e.echo); !o.OK {
			t.Errorf("carol has her own bucket: %s", o.Raw)
		}
		// The usage shows both members' counts in the current minute.
		status, out := e.env.Do(t, "GET", "/api/rate-limits?workspaceId="+e.ws, e.admin, nil)
		var list struct {
			Limits []struct {
				ID    string
				Usage []struct {
					Window, Subject string
					Used, Limit     int
				}
			}
		}
		_ = json.Unmarshal(out, &list)
		if status != 200 || len(list.Limits) != 1 || len(list.Limits[0].Usage) != 2 ||
			list.Limits[0].Usage[0].Subject != "bob" || list.Limits[0].Usage[0].Used != 2 || list.Limits[0].Usage[0].Limit != 2 ||
			list.Limits[0].Usage[1].Subject != "carol" || list.Limits[0].Usage[1].Used != 1 {
			t.Errorf("list: %d %s", status, out)
		}
	})
	t.Run("one member", func(t *testing.T) {
		id := e.setLimit(t, map[string]any{"connectionId": e.connID, "principal": "carol", "perDay": 1})
		defer e.env.Do(t, "DELETE", "/api/rate-limits/"+id+"?workspaceId="+e.ws, e.admin, nil)
		if o := e.call(t, e.env.URL, carol, e.add); !o.OK {
			t.Fatalf("carol's first call: %s", o.Raw)
		}
		o := e.call(t, e.env.URL, carol, e.echo) // another tool of the same connection
		if o.Code != "RATE_LIMITED" || o.Details["window"] != "day" {
			t.Fatalf("carol's second call: %s", o.Raw)
		}
		if secs, _ := o.Details["retryAfterSeconds"].(float64); secs < 1 || secs > 86400 {
			t.Errorf("retryAfterSeconds %v", secs)
		}
		if o := e.call(t, e.env.URL, bob, e.echo); !o.OK {
			t.Errorf("bob is not limited: %s", o.Raw)
		}
	})
	t.Run("whole workspace, lifted by delete", func(t *testing.T) {
		id := e.setLimit(t, map[string]any{"perMinute": 1, "perDay": 1000})
		earlyInMinute(t)
		e.call(t, e.env.URL, bob, e.add) // may be refused if this minute already counted one
		if o := e.call(t, e.env.URL, carol, e.add); o.Code != "RATE_LIMITED" || o.Details["window"] != "minute" {
			t.Fatalf("shared bucket: %s", o.Raw)
		}
		// The refused call gave its day count back: the day counter equals the admitted calls.
		var day int
		_ = e.env.Pool.QueryRow(context.Background(), `SELECT count FROM rate_limit_counters WHERE limit_id = $1 AND window_kind = 'day'`, id).Scan(&day)
		var minute int
		_ = e.env.Pool.QueryRow(context.Background(), `SELECT sum(count) FROM rate_limit_counters WHERE limit_id = $1 AND window_kind = 'minute'`, id).Scan(&minute)
		if day != minute {
			t.Errorf("day counter %d, minute counters %d: a refused call kept its day count", day, minute)
		}
		if status, out := e.env.Do(t, "DELETE", "/api/rate-limits/"+id+"?workspaceId="+e.ws, e.admin, nil); status != 204 {
			t.Fatalf("delete: %d %s", status, out)
		}
		if o := e.call(t, e.env.URL, carol, e.add); !o.OK {
			t.Errorf("after delete: %s", o.Raw)
		}
	})
}

// earlyInMinute waits, when less than a margin (10 s, scaled by TEST_TIMEOUT_SCALE, at most
// 30 s) is left of the current UTC minute, until the next minute begins. The limits count
// per fixed UTC minute (docs/RATE-LIMITS.md), so a short sequence of calls that must fall
// into one window starts early in a minute; otherwise a minute ending between two calls
// gives the second a fresh window and the test fails for no fault of the gateway.
func earlyInMinute(t *testing.T) {
	t.Helper()
	margin := min(testpeer.Scaled(10*time.Second), 30*time.Second)
	now := time.Now().UTC()
	if left := now.Truncate(time.Minute).Add(time.Minute).Sub(now); left < margin {
		time.Sleep(left + 50*time.Millisecond)
	}
}

// TestRateLimitTaskCall: a task-augmented call of a proxied tool counts too; over the limit
// it answers the RATE_LIMITED envelope instead of a task.
func TestRateLimitTaskCall(t *testing.T) {
	t.Parallel()
	e := newLimitEnv(t)
	e.setLimit(t, map[string]any{"tool": e.echo, "perMinute": 1})
	send := func() string {
		body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"` + e.echo + `","arguments":{"message":"x"},"task":{"ttl":60000}}}`
		req, _ := http.NewRequest(http.MethodPost, e.env.URL+"/mcp/"+e.ws, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", "Bearer "+e.admin)
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	earlyInMinute(t)
	first, second := send(), send()
	if !strings.Contains(first, `"task"`) || strings.Contains(first, "RATE_LIMITED") {
		t.Errorf("first task call: %s", first)
	}
	if !strings.Contains(second, `"RATE_LIMITED"`) || !strings.Contains(second, `"isError":true`) {
		t.Errorf("second task call: %s", second)
	}
}

// TestRateLimitBuiltins: an admin sets, lists and deletes a limit through the built-ins
// (the same service as REST); a member gets FORBIDDEN; a bad value is VALIDATION_ERROR.
func TestRateLimitBuiltins(t *testing.T) {
	t.Parallel()
	e := newLimitEnv(t)
	member := stacktest.Token(t, "bob", auth.RoleMember, e.ws)
	builtin := func(token, tool, args string) map[string]any {
		t.Helper()
		resp, raw := e.env.RPC(t, "/mcp/"+e.ws, token, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"`+tool+`","arguments":`+args+`}}`,
			map[string]string{"Mcp-Protocol-Version": "2025-11-25"})
		var m struct {
			Result struct {
				StructuredContent map[string]any `json:"structuredContent"`
			} `json:"result"`
		}
		if err := json.Unmarshal(raw, &m); err != nil || resp.StatusCode != 200 {
			t.Fatalf("%s: %d %s", tool, resp.StatusCode, raw)
		}
		return m.Result.StructuredContent
	}
	code := func(env map[string]any) string {
		e, _ := env["error"].(map[string]any)
		s, _ := e["code"].(string)
		return s
	}
	set := builtin(e.admin, "agentpack_ratelimit_set", `{"tool":"`+e.echo+`","perMinute":3}`)
	data, _ := set["data"].(map[string]any)
	lim, _ := data["limit"].(map[string]any)
	if set["ok"] != true || data["created"] != true || lim["perMinute"] != float64(3) {
		t.Fatalf("set: %v", set)
	}
	e.call(t, e.env.URL, e.admin, e.echo)
	list := builtin(e.admin, "agentpack_ratelimits_list", `{}`)
	ls, _ := list["data"].(map[string]any)["limits"].([]any)
	if len(ls) != 1 || len(ls[0].(map[string]any)["usage"].([]any)) != 1 {
		t.Errorf("list: %v", list)
	}
	if c := code(builtin(member, "agentpack_ratelimit_set", `{"perMinute":1}`)); c != "FORBIDDEN" {
		t.Errorf("member set: %s", c)
	}
	if c := code(builtin(e.admin, "agentpack_ratelimit_set", `{"perMinute":0}`)); c != "VALIDATION_ERROR" {
		t.Errorf("perMinute 0: %s", c)
	}
	if c := code(builtin(e.admin, "agentpack_ratelimit_delete", `{"limitId":"00000000-0000-0000-0000-000000000000"}`)); c != "NOT_FOUND" {
		t.Errorf("delete unknown: %s", c)
	}
	if del := builtin(e.admin, "agentpack_ratelimit_delete", `{"limitId":"`+lim["id"].(string)+`"}`); del["ok"] != true {
		t.Errorf("delete: %v", del)
	}
}
