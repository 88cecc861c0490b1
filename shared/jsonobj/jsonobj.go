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
	"io"
	"strconv"
)

// Members decodes one JSON object into its members (name -> the value's raw bytes),
// refusing duplicate names and trailing data (see the package doc). ok is false for
// anything that is not such an object, including null, arrays and malformed JSON.
func Members(raw []byte) (m map[string]json.RawMessage, ok bool) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, false
	}
	m = make(map[string]json.RawMessage, 4)
	for dec.More() {
		k, err := dec.Token()
		key, isStr := k.(string)
		if err != nil || !isStr {
			return nil, false
		}
		if _, dup := m[key]; dup {
			return nil, false
		}
		var v json.RawMessage
		if dec.Decode(&v) != nil {
			return nil, false
		}
		m[key] = v
	}
	if t, err := dec.Token(); err != nil || t != json.Delim('}') {
		return nil, false
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, false
	}
	return m, true
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

// memberSpan finds the byte span of the value of top-level member key in obj.
func memberSpan(obj json.RawMessage, key string) (start, end int, found bool, err error) {
	dec := json.NewDecoder(bytes.NewReader(obj))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return 0, 0, false, errors.New("not a JSON object")
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return 0, 0, false, err
		}
		k, _ := t.(string)
		var v json.RawMessage
		before := dec.InputOffset()
		if err := dec.Decode(&v); err != nil {
			return 0, 0, false, err
		}
		after := dec.InputOffset()
		if k == key && found {
			return 0, 0, false, errors.New("duplicate member " + strconv.Quote(key))
		}
		if k == key {
			// InputOffset before Decode points just after the key's string (or its ':');
			// the value starts at the first non-space, non-':' byte after it.
			s := int(before)
			for s < int(after) && (obj[s] == ' ' || obj[s] == '\t' || obj[s] == '\r' || obj[s] == '\n' || obj[s] == ':') {
				s++
			}
			start, end, found = s, int(after), true
		}
	}
	if t, err := dec.Token(); err != nil || t != json.Delim('}') {
		return 0, 0, false, errors.New("not a JSON object")
	}
	if _, err := dec.Token(); err != io.EOF {
		return 0, 0, false, errors.New("trailing data after the JSON object")
	}
	return start, end, found, nil
}
