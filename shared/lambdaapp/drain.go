package lambdaapp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"sync"
	"time"
)

// DrainExtensionName is the name of the internal Lambda extension that runs the drain
// (Lambda-Extension-Name of the Extensions API registration).
const DrainExtensionName = "agentpack-drain"

// drainMargin is kept free before an invocation's deadline: the drain ends by then.
const drainMargin = 200 * time.Millisecond

// drainState is the drain registered for this process and the invocation count that the
// extension matches against the handler's.
var drainState struct {
	mu      sync.Mutex
	fn      func(context.Context)
	handled int64         // invocations whose handler returned
	changed chan struct{} // closed and replaced when handled grows
	active  bool          // the extension is registered: handlers do not drain inline
}

// RegisterDrain sets fn as the work that must finish after each invocation's answer and
// before the execution environment may freeze (the gateway's audit rows). Call it before
// Start or StartWithEvents. Under Lambda they then register an internal extension for
// INVOKE events (Extensions API 2020-01-01): Lambda freezes an environment only after the
// runtime and every extension have asked for the next event, so the extension, once the
// invocation's handler has returned and its response is on its way, runs fn (bounded by
// the invocation's deadline less 200 ms) and only then asks for the next event. If the
// registration fails, each handler runs fn itself before returning (the answer then waits;
// nothing is lost to a freeze). Locally fn is not used: the process does not freeze, and
// shutdown hooks flush.
func RegisterDrain(fn func(context.Context)) {
	drainState.mu.Lock()
	defer drainState.mu.Unlock()
	drainState.fn = fn
	if drainState.changed == nil {
		drainState.changed = make(chan struct{})
	}
}

// invocationDone is called by the Lambda handlers when an invocation's handler returned:
// it lets the extension drain, or drains inline when no extension is registered.
func invocationDone(ctx context.Context) {
	drainState.mu.Lock()
	fn, active := drainState.fn, drainState.active
	if fn == nil {
		drainState.mu.Unlock()
		return
	}
	drainState.handled++
	close(drainState.changed)
	drainState.changed = make(chan struct{})
	drainState.mu.Unlock()
	if !active {
		dctx, cancel := drainContext(context.WithoutCancel(ctx), deadlineOf(ctx))
		defer cancel()
		fn(dctx)
	}
}

func deadlineOf(ctx context.Context) time.Time {
	d, _ := ctx.Deadline()
	return d
}

// drainContext bounds a drain by deadline less drainMargin (no deadline: 10 s).
func drainContext(ctx context.Context, deadline time.Time) (context.Context, context.CancelFunc) {
	if deadline.IsZero() {
		return context.WithTimeout(ctx, 10*time.Second)
	}
	return context.WithDeadline(ctx, deadline.Add(-drainMargin))
}

// startDrainExtension registers the internal extension when a drain is registered and the
// process runs under Lambda, and runs its event loop on a goroutine.
func startDrainExtension(logger *slog.Logger) {
	drainState.mu.Lock()
	fn := drainState.fn
	drainState.mu.Unlock()
	api := os.Getenv("AWS_LAMBDA_RUNTIME_API")
	if fn == nil || api == "" {
		return
	}
	x := &extensionClient{base: "http://" + api + "/2020-01-01/extension/", http: &http.Client{}}
	id, err := x.register(DrainExtensionName, "INVOKE")
	if err != nil {
		logger.Warn("drain extension not registered: each invocation drains before answering", "err", err)
		return
	}
	drainState.mu.Lock()
	drainState.active = true
	drainState.mu.Unlock()
	go drainLoop(x, id, fn, logger)
}

// drainLoop is the extension: for each INVOKE event it waits for that invocation's handler
// to return, runs fn, then asks for the next event.
func drainLoop(x *extensionClient, id string, fn func(context.Context), logger *slog.Logger) {
	var seen int64
	for {
		ev, err := x.next(id)
		if err != nil {
			logger.Error("drain extension: next event failed; draining inline from now on", "err", err)
			drainState.mu.Lock()
			drainState.active = false
			drainState.mu.Unlock()
			return
		}
		if ev.EventType == "SHUTDOWN" {
			return
		}
		seen++
		deadline := time.Time{}
		if ev.DeadlineMs > 0 {
			deadline = time.UnixMilli(ev.DeadlineMs)
		}
		ctx, cancel := drainContext(context.Background(), deadline)
		for {
			drainState.mu.Lock()
			done, ch := drainState.handled >= seen, drainState.changed
			drainState.mu.Unlock()
			if done {
				break
			}
			select {
			case <-ch:
			case <-ctx.Done():
			}
			if ctx.Err() != nil {
				break
			}
		}
		fn(ctx)
		cancel()
	}
}

// extensionClient speaks the Lambda Extensions API.
type extensionClient struct {
	base string
	http *http.Client
}

// extensionEvent is an event of /extension/event/next.
type extensionEvent struct {
	EventType  string `json:"eventType"`
	DeadlineMs int64  `json:"deadlineMs"`
	RequestID  string `json:"requestId"`
}

func (x *extensionClient) register(name string, events ...string) (string, error) {
	body, _ := json.Marshal(map[string][]string{"events": events})
	req, _ := http.NewRequest(http.MethodPost, x.base+"register", bytes.NewReader(body))
	req.Header.Set("Lambda-Extension-Name", name)
	resp, err := x.http.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	id := resp.Header.Get("Lambda-Extension-Identifier")
	if resp.StatusCode != http.StatusOK || id == "" {
		return "", fmt.Errorf("extension register: status %d", resp.StatusCode)
	}
	return id, nil
}

func (x *extensionClient) next(id string) (extensionEvent, error) {
	var ev extensionEvent
	req, _ := http.NewRequest(http.MethodGet, x.base+"event/next", nil)
	req.Header.Set("Lambda-Extension-Identifier", id)
	resp, err := x.http.Do(req)
	if err != nil {
		return ev, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return ev, fmt.Errorf("extension next: status %d", resp.StatusCode)
	}
	err = json.NewDecoder(resp.Body).Decode(&ev)
	return ev, err
}
