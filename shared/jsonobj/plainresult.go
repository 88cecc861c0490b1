package jsonobj

import (
	"bytes"
	"encoding/json"
	"strconv"
)

// PlainResult returns the "result" member of b, byte for byte (a sub-slice of b), when b
// is the plain success response to request id that nearly every answer is: one valid JSON
// object of exactly the members "jsonrpc" ("2.0"), "id" (id as a JSON integer, no
// fraction or exponent) and a non-null "result", no duplicate, no escaped member name,
// nested less deep than go-sdk's limit (1,000). Anything else reports false, and the
// caller decodes b with a full JSON-RPC decoder (mcpclient uses go-sdk's
// jsonrpc.DecodeMessage), whose answers for it stay as they were: a result this returns
// is the one that decoder reads (FuzzPlainResult). The reason is the cost: go-sdk's
// decoder allocates a 32 KiB read buffer per message (segmentio/encoding's minimum),
// which was half of the gateway's garbage per proxied call (docs/ARCHITECTURE.md "The
// proxied call's cost"); this scan allocates nothing.
func PlainResult(b []byte, id int64) (json.RawMessage, bool) {
	if !json.Valid(b) {
		return nil, false
	}
	// b is one valid JSON value from here on, so the scan below need not check its syntax.
	i := skipSpace(b, 0)
	if b[i] != '{' {
		return nil, false
	}
	var version, rid, res []byte
	for i++; ; {
		i = skipSpace(b, i)
		if b[i] != '"' {
			return nil, false // {} : no members
		}
		n := bytes.IndexByte(b[i+1:], '"')
		key := b[i+1 : i+1+n]
		if bytes.IndexByte(key, '\\') >= 0 {
			return nil, false
		}
		i = skipSpace(b, skipSpace(b, i+n+2)+1) // past the name and its ':'
		end, ok := valueEnd(b, i)
		if !ok {
			return nil, false
		}
		var slot *[]byte
		switch string(key) {
		case "jsonrpc":
			slot = &version
		case "id":
			slot = &rid
		case "result":
			slot = &res
		default:
			return nil, false
		}
		if *slot != nil {
			return nil, false // a duplicate: decoders disagree on which one counts
		}
		*slot = b[i:end]
		if i = skipSpace(b, end); b[i] == '}' {
			break
		}
		i++ // ','
	}
	if string(version) != `"2.0"` || string(rid) != strconv.FormatInt(id, 10) || res == nil || string(res) == "null" {
		return nil, false
	}
	return res, true
}

// plainMaxDepth is below go-sdk's nesting limit (1,000, counted from the message's
// object): a deeper result goes to go-sdk's decoder, which refuses it.
const plainMaxDepth = 998

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// valueEnd returns the end of the valid JSON value that starts at b[i]; ok is false when
// it nests deeper than plainMaxDepth.
func valueEnd(b []byte, i int) (end int, ok bool) {
	depth := 0
	for ; i < len(b); i++ {
		switch c := b[i]; c {
		case '"':
			for i++; b[i] != '"'; i++ {
				if b[i] == '\\' {
					i++
				}
			}
			if depth == 0 {
				return i + 1, true
			}
		case '{', '[':
			if depth++; depth > plainMaxDepth {
				return 0, false
			}
		case '}', ']':
			if depth == 0 {
				return i, true // the end of a scalar before its container's end
			}
			if depth--; depth == 0 {
				return i + 1, true
			}
		case ',', ' ', '\t', '\n', '\r':
			if depth == 0 {
				return i, true
			}
		}
	}
	return i, true
}
