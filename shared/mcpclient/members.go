package mcpclient

import (
	"encoding/json"
	"errors"

	"github.com/agentpack/gateway/shared/jsonobj"
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
	return jsonobj.SetMember(params, "_meta", mb)
}

// hasMeta reports whether params._meta holds key.
func hasMeta(params json.RawMessage, key string) bool {
	m, ok := jsonobj.Members(params)
	if !ok {
		return false
	}
	meta, ok := jsonobj.Members(m["_meta"])
	return ok && meta[key] != nil
}

// deleteMeta returns params without _meta[key] (and without _meta when that was its only
// key).
func deleteMeta(params json.RawMessage, key string) (json.RawMessage, error) {
	m, ok := jsonobj.Members(params)
	if !ok {
		return nil, errors.New("params is not a JSON object")
	}
	meta, ok := jsonobj.Members(m["_meta"])
	if !ok || meta[key] == nil {
		return params, nil
	}
	if len(meta) == 1 {
		return jsonobj.DeleteMember(params, "_meta")
	}
	mb, err := jsonobj.DeleteMember(m["_meta"], key)
	if err != nil {
		return nil, err
	}
	return jsonobj.SetMember(params, "_meta", mb)
}
