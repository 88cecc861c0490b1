package mcpclient

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strconv"
)

// mergeMeta returns params (a JSON object) with add's keys set in its _meta object;
// members other than _meta keep their bytes.
func mergeMeta(params json.RawMessage, add map[string]any) (json.RawMessage, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(params, &m); err != nil || m == nil {
		return nil, errors.New("params is not a JSON object")
	}
	meta := map[string]json.RawMessage{}
	if raw, ok := m["_meta"]; ok && string(raw) != "null" {
		if err := json.Unmarshal(raw, &meta); err != nil || meta == nil {
			return nil, errors.New("params._meta is not a JSON object")
		}
	}
	for k, v := range add {
		b, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		meta[k] = b
	}
	mb, err := json.Marshal(meta)
	if err != nil {
		return nil, err
	}
	return SetMember(params, "_meta", mb)
}

// hasMeta reports whether params._meta holds key.
func hasMeta(params json.RawMessage, key string) bool {
	m, ok := Members(params)
	if !ok {
		return false
	}
	meta, ok := Members(m["_meta"])
	return ok && meta[key] != nil
}

// deleteMeta returns params without _meta[key] (and without _meta when that was its only
// key).
func deleteMeta(params json.RawMessage, key string) (json.RawMessage, error) {
	m, ok := Members(params)
	if !ok {
		return nil, errors.New("params is not a JSON object")
	}
	meta, ok := Members(m["_meta"])
	if !ok || meta[key] == nil {
		return params, nil
	}
	if len(meta) == 1 {
		return DeleteMember(params, "_meta")
	}
	mb, err := DeleteMember(m["_meta"], key)
	if err != nil {
		return nil, err
	}
	return SetMember(params, "_meta", mb)
}

// Members decodes one JSON object into its members (raw values), refusing duplicate keys
// and trailing data — decoders disagree on those (encoding/json keeps the last duplicate,
// others the first), so a gateway that checks one member must not forward an object
// another decoder reads differently. ok is false for anything else.
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
// byte of obj is kept. Errors when obj is not a single JSON object.
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
// when absent); every other byte is kept.
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
