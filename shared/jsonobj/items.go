package jsonobj

import (
	"bytes"
	"encoding/json"
)

// String is s as a JSON string with <, > and & as they are (json.Marshal would escape
// them): a URI the gateway rewrites must reach the client as the upstream spelled it.
func String(s string) json.RawMessage {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return bytes.TrimRight(b.Bytes(), "\n")
}

// MapItems applies f to each item of the JSON array arr, replacing an item where f answers
// ok; the bytes between items (spacing, the items f leaves) are kept. changed is false, and
// arr returned, when f changed nothing or arr is not an array.
func MapItems(arr json.RawMessage, f func(item json.RawMessage) (json.RawMessage, bool)) (_ json.RawMessage, changed bool) {
	dec := json.NewDecoder(bytes.NewReader(arr))
	if t, err := dec.Token(); err != nil || t != json.Delim('[') {
		return arr, false
	}
	var out []byte
	last := 0 // arr[:last] is in out
	for dec.More() {
		var item json.RawMessage
		if dec.Decode(&item) != nil {
			return arr, false
		}
		end := int(dec.InputOffset())
		start := end - len(item)
		edited, ok := f(item)
		if !ok {
			continue
		}
		out = append(append(out, arr[last:start]...), edited...)
		last = end
	}
	if out == nil {
		return arr, false
	}
	return append(out, arr[last:]...), true
}
