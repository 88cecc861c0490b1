package response

import (
	"bytes"
	"mime"
	"net/http"
	"strconv"
	"strings"
)

// Acceptable reports which answer types an Accept header list allows (RFC 9110 §12.5.1:
// a missing header allows any; */*, application/* and text/* ranges count; q=0 excludes).
// The gateway answers JSON when allowed, else a one-event text/event-stream (MCP
// Streamable HTTP allows either for a POST); only a list allowing neither is refused (406).
func Acceptable(values []string) (jsonOK, sseOK bool) {
	if len(values) == 0 {
		return true, true
	}
	seen := false
	for _, v := range values {
		for _, raw := range strings.Split(v, ",") {
			if strings.TrimSpace(raw) == "" {
				continue
			}
			seen = true
			mt, params, err := mime.ParseMediaType(raw)
			if err != nil {
				continue
			}
			if q, ok := params["q"]; ok {
				if f, err := strconv.ParseFloat(q, 64); err != nil || f <= 0 {
					continue
				}
			}
			switch mt {
			case "*/*":
				jsonOK, sseOK = true, true
			case "application/*", "application/json":
				jsonOK = true
			case "text/*", "text/event-stream":
				sseOK = true
			}
		}
	}
	if !seen {
		return true, true
	}
	return jsonOK, sseOK
}

// Relay turns a buffered 200 application/json answer into a text/event-stream body: one
// "message" event per relayed notification, then the answer's own event. Nothing changes
// when events is empty, the answer is not such a JSON body, or the result would pass the
// size limit (the notifications are then dropped, the answer kept).
//
// force makes the conversion happen without events too: the client allows only
// text/event-stream.
func (w *Writer) Relay(events [][]byte, force bool) {
	if (len(events) == 0 && !force) || w.tooBig || w.flushed || w.status != http.StatusOK || w.buf.Len() == 0 ||
		w.Header().Get("Content-Type") != "application/json" {
		return
	}
	var out bytes.Buffer
	for _, ev := range events {
		writeEvent(&out, ev)
	}
	writeEvent(&out, bytes.TrimSpace(w.buf.Bytes()))
	if out.Len() > w.limit {
		return
	}
	w.buf = out
	w.Header().Set("Content-Type", "text/event-stream")
}

// writeEvent writes data as one SSE "message" event (a data line per line of data).
func writeEvent(out *bytes.Buffer, data []byte) {
	out.WriteString("event: message\n")
	for line := range bytes.Lines(data) {
		out.WriteString("data: ")
		out.Write(bytes.TrimRight(line, "\r\n"))
		out.WriteByte('\n')
	}
	out.WriteByte('\n')
}
