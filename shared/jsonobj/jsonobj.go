// Package jsonobj edits and reads JSON objects as bytes: one member is read, set or
// deleted and every other byte of the object stays as it was, and the "result" member of a
// plain JSON-RPC success response is found without decoding it. The gateway forwards what
// clients and upstreams wrote, so it must change only the member it means to change (a
// decode and re-encode would reorder keys, escape '<', '>' and '&', and drop what Go types
// do not know).
//
// It is a leaf: it imports only the standard library (test/rules keeps it so), so the
// catalog, the upstream client and the gateway can all use it.
//
// An object here is one JSON object with no duplicate member names and nothing after it:
// decoders disagree on which duplicate counts (encoding/json keeps the last, others the
// first), so a gateway that checks one member must not forward an object another decoder
// reads differently.
package jsonobj

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
)

// Members decodes one JSON object into its members (raw values), refusing duplicate keys
// and trailing data — decoders disagree on those (encoding/json keeps the last duplicate,
// others the first), so a gateway that checks one member must not forward an object
// another decoder reads differently. ok is false for anything else. Keys are decoded as
// encoding/json decodes them; the values are copies (one allocation for all of them), not
// views of raw.
//
// It runs on every proxied request (the edge reads the request and its params), so it
// splits the object with scanObject after one json.Valid pass instead of a json.Decoder's
// token stream (≈ 5× the CPU and allocations; BenchmarkMembers).
func Members(raw []byte) (m map[string]json.RawMessage, ok bool) {
	var buf []byte
	m = make(map[string]json.RawMessage, 4)
	ok = scanObject(raw, func(key string, start, end int) bool {
		if _, dup := m[key]; dup {
			return false
		}
		if buf == nil {
			buf = bytes.Clone(raw)
		}
		m[key] = json.RawMessage(buf[start:end:end])
		return true
	})
	if !ok {
		return nil, false
	}
	return m, true
}

// scanObject calls fn with each top-level member of raw — its key, decoded as encoding/json
// decodes it, and the byte span [start, end) of its value — in order, while fn returns
// true. It reports false when raw is not exactly one valid JSON object (whitespace around
// it allowed) or fn returned false. Validity is checked first (json.Valid), so the split
// itself only tracks strings and nesting.
func scanObject(raw []byte, fn func(key string, start, end int) bool) bool {
	if !json.Valid(raw) {
		return false
	}
	i := skipSpace(raw, 0)
	if raw[i] != '{' {
		return false
	}
	i = skipSpace(raw, i+1)
	if raw[i] == '}' {
		return true
	}
	for {
		ke := skipString(raw, i)
		key, ok := decodeKey(raw[i:ke])
		if !ok {
			return false
		}
		i = skipSpace(raw, skipSpace(raw, ke)+1) // past ':'
		ve := skipValue(raw, i)
		if !fn(key, i, ve) {
			return false
		}
		i = skipSpace(raw, ve)
		if raw[i] == '}' {
			return true
		}
		i = skipSpace(raw, i+1) // past ','
	}
}

// skipString returns the index just past the string starting at b[i] ('"'); b is valid JSON.
func skipString(b []byte, i int) int {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return len(b)
}

// skipValue returns the index just past the value starting at b[i]; b is valid JSON.
func skipValue(b []byte, i int) int {
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				j = skipString(b, j) - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return j + 1
				}
			}
		}
		return len(b)
	}
	j := i
	for j < len(b) && b[j] != ',' && b[j] != '}' && b[j] != ']' && b[j] != ' ' && b[j] != '\t' && b[j] != '\r' && b[j] != '\n' {
		j++
	}
	return j
}

// decodeKey decodes a quoted key: as is when it is plain ASCII without escapes, else by
// encoding/json (escapes, and invalid UTF-8 replaced as the decoder does).
func decodeKey(q []byte) (string, bool) {
	plain := true
	for _, c := range q[1 : len(q)-1] {
		if c == '\\' || c >= 0x80 {
			plain = false
			break
		}
	}
	if plain {
		return string(q[1 : len(q)-1]), true
	}
	var k string
	return k, json.Unmarshal(q, &k) == nil
}

// SetMember returns obj (a JSON object) with member key set to value (raw JSON): an
// existing member's value is replaced in place, else the member is appended. Every other
// byte of obj is kept. value is not checked: the caller passes valid JSON. Errors when obj
// is not a single JSON object, or names key twice.
func SetMember(obj json.RawMessage, key string, value json.RawMessage) (json.RawMessage, error) {
	start, end, found, err := memberSpan(obj, key)
	if err != nil {
		return nil, err
	}
	if found {
		out := make([]byte, 0, len(obj)-(end-start)+len(value))
		out = append(out, obj[:start]...)
		out = append(out, value...)
		return append(out, obj[end:]...), nil
	}
	trimmed := bytes.TrimRight(obj, " \t\r\n")
	closeAt := len(trimmed) - 1 // the final '}'
	kb, _ := json.Marshal(key)
	out := make([]byte, 0, len(obj)+len(kb)+len(value)+2)
	out = append(out, trimmed[:closeAt]...)
	if !bytes.Equal(bytes.TrimSpace(trimmed[:closeAt]), []byte("{")) {
		out = append(out, ',')
	}
	out = append(out, kb...)
	out = append(out, ':')
	out = append(out, value...)
	return append(out, '}'), nil
}

// DeleteMember returns obj (a JSON object) without its top-level member key (obj itself
// when absent); every other byte is kept. Errors as SetMember does.
func DeleteMember(obj json.RawMessage, key string) (json.RawMessage, error) {
	start, end, found, err := memberSpan(obj, key)
	if err != nil || !found {
		return obj, err
	}
	// Widen [start, end) from the value to the whole member and one adjacent comma.
	i := start - 1
	for i >= 0 && obj[i] != ',' && obj[i] != '{' {
		i--
	}
	// obj[i] is the ',' before the member or the object's '{'.
	j := end
	for j < len(obj) && (obj[j] == ' ' || obj[j] == '\t' || obj[j] == '\r' || obj[j] == '\n') {
		j++
	}
	out := make([]byte, 0, len(obj))
	if obj[i] == ',' {
		out = append(append(out, obj[:i]...), obj[j:]...) // drop ",<member>"
	} else if j < len(obj) && obj[j] == ',' {
		out = append(append(out, obj[:i+1]...), obj[j+1:]...) // first member: drop "<member>,"
	} else {
		out = append(append(out, obj[:i+1]...), obj[j:]...) // the only member
	}
	return out, nil
}

// memberSpan finds the byte span of the value of top-level member key in obj (found false
// when absent); an error when obj is not one JSON object or has key twice.
func memberSpan(obj json.RawMessage, key string) (start, end int, found bool, err error) {
	dup := false
	ok := scanObject(obj, func(k string, s, e int) bool {
		if k != key {
			return true
		}
		if found {
			dup = true
			return false
		}
		start, end, found = s, e, true
		return true
	})
	if dup {
		return 0, 0, false, errors.New("duplicate member " + strconv.Quote(key))
	}
	if !ok {
		return 0, 0, false, errors.New("not a JSON object")
	}
	return start, end, found, nil
}
