package main

// Cold start under the Lambda runtime emulator (infra/rie): the mcp function started in the
// emulator, timed to its first tools/list pages answered.

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/agentpack/gateway/infra/rie"
)

// lambdaEvent is events/mcp-tools-list.json aimed at workspace ws with token.
func lambdaEvent(root, ws, token string) ([]byte, error) {
	b, err := os.ReadFile(filepath.Join(root, "events", "mcp-tools-list.json"))
	if err != nil {
		return nil, err
	}
	var ev map[string]any
	if err := json.Unmarshal(b, &ev); err != nil {
		return nil, err
	}
	ev["rawPath"] = "/mcp/" + ws
	ev["pathParameters"] = map[string]any{"workspaceId": ws}
	ev["headers"].(map[string]any)["authorization"] = "Bearer " + token
	ev["requestContext"].(map[string]any)["http"].(map[string]any)["path"] = "/mcp/" + ws
	return json.Marshal(ev)
}

// coldRIE starts the bootstrap under the emulator runs times and returns the times from
// emulator start to the first answered tools/list, to its last page (each nextCursor
// followed, in the same execution environment) and the emulator's init durations, each
// sorted.
func coldRIE(ctx context.Context, emulator, bootstrap string, env []string, event []byte, runs int) (first, full, init []time.Duration, err error) {
	for i := 0; i < runs; i++ {
		e, err := rie.Start(ctx, rie.Options{Emulator: emulator, Bootstrap: bootstrap, Env: env, Timeout: 30 * time.Second})
		if err != nil {
			return nil, nil, nil, err
		}
		inv, err := e.Invoke(ctx, event)
		last := inv
		if err == nil {
			last, err = riePages(ctx, e, inv, event)
		}
		d, _ := e.InitDuration()
		e.Stop()
		if err != nil {
			return nil, nil, nil, fmt.Errorf("%w\n%s", err, e.Output())
		}
		first, full, init = append(first, inv.SinceStart), append(full, last.SinceStart), append(init, d)
	}
	slices.Sort(first)
	slices.Sort(full)
	slices.Sort(init)
	return first, full, init, nil
}

// riePages checks inv, a tools/list answer, and follows its nextCursor with event's
// tools/list asking for each next page until the last, which it returns.
func riePages(ctx context.Context, e *rie.Emulator, inv rie.Invocation, event []byte) (rie.Invocation, error) {
	for {
		r, err := inv.HTTP()
		if err == nil && (r.StatusCode != 200 || !strings.Contains(r.Body, `"tools"`)) {
			err = fmt.Errorf("emulator answer %d: %.300s", r.StatusCode, r.Body)
		}
		if err != nil {
			return inv, err
		}
		body := []byte(r.Body)
		if r.IsBase64Encoded {
			if body, err = base64.StdEncoding.DecodeString(r.Body); err != nil {
				return inv, err
			}
		}
		if strings.HasPrefix(r.Headers["Content-Type"], "text/event-stream") || strings.HasPrefix(r.Headers["content-type"], "text/event-stream") {
			body = lastEventData(body)
		}
		var msg struct {
			Result struct {
				NextCursor string `json:"nextCursor"`
			} `json:"result"`
		}
		if err := json.Unmarshal(body, &msg); err != nil {
			return inv, fmt.Errorf("emulator answer: %w: %.200s", err, body)
		}
		if msg.Result.NextCursor == "" {
			return inv, nil
		}
		var ev map[string]any
		if err := json.Unmarshal(event, &ev); err != nil {
			return inv, err
		}
		ev["body"] = `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"cursor":` + strconv.Quote(msg.Result.NextCursor) + `}}`
		delete(ev["headers"].(map[string]any), "content-length")
		next, err := json.Marshal(ev)
		if err != nil {
			return inv, err
		}
		if inv, err = e.Invoke(ctx, next); err != nil {
			return inv, err
		}
	}
}
