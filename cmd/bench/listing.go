package main

// Listing through the gateway for the scale table: a full tools/list followed page by page,
// and the stored catalog's size.

import (
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/agentpack/gateway/shared/catalog"
)

// listAll pages through the gateway's tools/list (nextCursor) with every tool listed
// (X-MCP-Discovery: all) and returns the time, the answer bytes and the pages.
func listAll(gwURL, token string) (time.Duration, int, int, error) { return listPages(gwURL, token, 0) }

// listPages is listAll stopping after max pages (0: every page).
func listPages(gwURL, token string, max int) (time.Duration, int, int, error) {
	t0 := time.Now()
	cursor, total, pages := "", 0, 0
	for {
		params := `{}`
		if cursor != "" {
			params = `{"cursor":` + strconv.Quote(cursor) + `}`
		}
		req, _ := http.NewRequest(http.MethodPost, gwURL, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":`+params+`}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", protocolVersion)
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("X-MCP-Discovery", "all") // every tool, above the discovery threshold too
		resp, err := client.Do(req)
		if err != nil {
			return 0, 0, 0, err
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return 0, 0, 0, err
		}
		if resp.StatusCode != http.StatusOK {
			return 0, 0, 0, fmt.Errorf("tools/list: status %d: %.200s", resp.StatusCode, b)
		}
		total += len(b)
		pages++
		if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
			b = lastEventData(b)
		}
		var msg struct {
			Result *struct {
				NextCursor string `json:"nextCursor"`
			} `json:"result"`
		}
		if err := json.Unmarshal(b, &msg); err != nil || msg.Result == nil {
			return 0, 0, 0, fmt.Errorf("tools/list answer: %.200s", b)
		}
		if cursor = msg.Result.NextCursor; cursor == "" || pages == max {
			return time.Since(t0), total, pages, nil
		}
	}
}

// catalogSize sums the stored objects of workspace ws (index and parts) and returns the
// total and the index's bytes.
func catalogSize(dir, ws string) (total, index int64) {
	root := filepath.Join(dir, filepath.FromSlash(filepath.Dir(catalog.IndexKey(ws))))
	_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if fi, err := d.Info(); err == nil {
				total += fi.Size()
				if d.Name() == "index.json" {
					index = fi.Size()
				}
			}
		}
		return nil
	})
	return total, index
}
