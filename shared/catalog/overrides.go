package catalog

import (
	"encoding/json"
	"fmt"

	"github.com/agentpack/gateway/shared/db"
	"github.com/agentpack/gateway/shared/jsonobj"
)

// OverrideMetaKey is the _meta key an overridden tool definition carries
// (docs/OVERRIDES.md): {"upstreamName": the upstream's own name, "fields": the members
// the workspace's override changed, among "name", "title", "description", "annotations"}.
const OverrideMetaKey = "io.agentpack/override"

// ApplyOverrides returns tools (one connection's, as the upstream listed them) with a
// workspace's overrides of that connection applied (docs/OVERRIDES.md): a hidden tool is
// left out; any other overridden tool gets the override's exposed name, title and
// description, its annotations merged member by member (a null member removes one), and
// OverrideMetaKey in its definition's _meta. UpstreamName is kept, so a call still
// reaches the upstream's own name. Overrides of tools not in tools are dormant and change
// nothing. tools itself is not modified. A definition the override cannot be applied to
// (not a JSON object) is kept as listed.
func ApplyOverrides(tools []Tool, ovs []db.ToolOverride) []Tool {
	if len(ovs) == 0 {
		return tools
	}
	by := make(map[string]*db.ToolOverride, len(ovs))
	for i := range ovs {
		by[ovs[i].UpstreamName] = &ovs[i]
	}
	out := make([]Tool, 0, len(tools))
	for _, t := range tools {
		o := by[t.UpstreamName]
		if o == nil {
			out = append(out, t)
			continue
		}
		if o.Hidden {
			continue
		}
		if nt, err := applyOverride(t, o); err == nil {
			t = nt
		}
		out = append(out, t)
	}
	return out
}

// applyOverride is t with o applied (o not hidden).
func applyOverride(t Tool, o *db.ToolOverride) (Tool, error) {
	def := t.Definition
	if len(def) == 0 {
		var err error
		if def, err = json.Marshal(struct {
			Name         string          `json:"name"`
			Title        string          `json:"title,omitempty"`
			Description  string          `json:"description,omitempty"`
			InputSchema  json.RawMessage `json:"inputSchema"`
			OutputSchema json.RawMessage `json:"outputSchema,omitempty"`
			Annotations  json.RawMessage `json:"annotations,omitempty"`
		}{t.UpstreamName, t.Title, t.Description, t.InputSchema, t.OutputSchema, t.Annotations}); err != nil {
			return t, err
		}
	}
	members, ok := jsonobj.Members(def)
	if !ok {
		return t, fmt.Errorf("catalog: tool %q: definition is not a JSON object", t.UpstreamName)
	}
	fields := []string{}
	set := func(key string, v any) error {
		b, err := json.Marshal(v)
		if err != nil {
			return err
		}
		def, err = jsonobj.SetMember(def, key, b)
		return err
	}
	if o.ExposedName != nil && *o.ExposedName != t.ExposedName {
		t.ExposedName = *o.ExposedName
		fields = append(fields, "name")
	}
	if o.Title != nil {
		t.Title = *o.Title
		if err := set("title", *o.Title); err != nil {
			return t, err
		}
		fields = append(fields, "title")
	}
	if o.Description != nil {
		t.Description = *o.Description
		if err := set("description", *o.Description); err != nil {
			return t, err
		}
		fields = append(fields, "description")
	}
	if len(o.Annotations) > 0 && string(o.Annotations) != "null" {
		merged, err := MergeAnnotations(members["annotations"], o.Annotations)
		if err != nil {
			return t, err
		}
		t.Annotations = merged
		if def, err = jsonobj.SetMember(def, "annotations", merged); err != nil {
			return t, err
		}
		fields = append(fields, "annotations")
	}
	meta := map[string]json.RawMessage{}
	if raw, ok := members["_meta"]; ok && string(raw) != "null" {
		if err := json.Unmarshal(raw, &meta); err != nil || meta == nil {
			meta = map[string]json.RawMessage{} // not an object: replaced by ours
		}
	}
	mark, err := json.Marshal(map[string]any{"upstreamName": t.UpstreamName, "fields": fields})
	if err != nil {
		return t, err
	}
	meta[OverrideMetaKey] = mark
	mb, err := json.Marshal(meta)
	if err != nil {
		return t, err
	}
	if def, err = jsonobj.SetMember(def, "_meta", mb); err != nil {
		return t, err
	}
	t.Definition = def
	return t, nil
}

// MergeAnnotations is the upstream's annotations object (absent or null: none) with
// patch's members set over it, a null member of patch removing that annotation (one level
// of RFC 7396 JSON merge patch). Errors when either is not a JSON object.
func MergeAnnotations(upstream, patch json.RawMessage) (json.RawMessage, error) {
	base := map[string]json.RawMessage{}
	if len(upstream) > 0 && string(upstream) != "null" {
		if err := json.Unmarshal(upstream, &base); err != nil || base == nil {
			return nil, fmt.Errorf("catalog: upstream annotations are not a JSON object")
		}
	}
	var p map[string]json.RawMessage
	if err := json.Unmarshal(patch, &p); err != nil || p == nil {
		return nil, fmt.Errorf("catalog: override annotations are not a JSON object")
	}
	for k, v := range p {
		if string(v) == "null" {
			delete(base, k)
		} else {
			base[k] = v
		}
	}
	return json.Marshal(base)
}
