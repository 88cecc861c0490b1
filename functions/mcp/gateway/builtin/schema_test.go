package builtin

import (
	"encoding/json"
	"net/netip"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/agentpack/gateway/shared/connections"
)

// TestDataSchema: an answer's schema is generated from its Out type (a struct, its
// view tags read, a type that encodes itself described as it encodes); Unstructured has
// none; anything else is an error at New, never a tool listed with a wrong schema.
func TestDataSchema(t *testing.T) {
	t.Parallel()
	type ok struct {
		Kind  string                    `json:"kind" enum:"a,b" doc:"Which."`
		Opt   *string                   `json:"opt,omitempty" enum:"x"`
		Raw   json.RawMessage           `json:"raw"`
		At    time.Time                 `json:"at"`
		Test  connections.RefreshResult `json:"test"`
		Inner []struct {
			N int `json:"n"`
		} `json:"inner"`
	}
	raw, err := dataSchema(reflect.TypeFor[ok]())
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		Type       string                    `json:"type"`
		Required   []string                  `json:"required"`
		Additional *bool                     `json:"additionalProperties"`
		Properties map[string]map[string]any `json:"properties"`
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatal(err)
	}
	p := s.Properties
	if s.Type != "object" || s.Additional == nil || *s.Additional || strings.Join(s.Required, ",") != "kind,raw,at,test,inner" {
		t.Errorf("root %s", raw)
	}
	if e, _ := json.Marshal(p["kind"]["enum"]); string(e) != `["a","b"]` || p["kind"]["description"] != "Which." {
		t.Errorf("kind %v", p["kind"])
	}
	if e, _ := json.Marshal(p["opt"]["enum"]); string(e) != `["x",null]` {
		t.Errorf("nullable enum %v", p["opt"])
	}
	if p["at"]["type"] != "string" || p["raw"]["type"] == nil {
		t.Errorf("at %v raw %v", p["at"], p["raw"])
	}
	if tp, _ := p["test"]["properties"].(map[string]any); tp["stage"] == nil || tp["success"] == nil {
		t.Errorf("RefreshResult is not described as TestAnswer: %v", p["test"])
	}
	if raw, err := dataSchema(reflect.TypeFor[Unstructured]()); raw != nil || err != nil {
		t.Errorf("Unstructured: %s, %v", raw, err)
	}
	type selfEncoded struct {
		Addr netip.Addr `json:"addr"`
	}
	for _, bad := range []reflect.Type{nil, reflect.TypeFor[any](), reflect.TypeFor[map[string]any](),
		reflect.TypeFor[[]int](), reflect.TypeFor[*ok](), reflect.TypeFor[selfEncoded]()} {
		if raw, err := dataSchema(bad); err == nil {
			t.Errorf("dataSchema(%v) = %s, want an error", bad, raw)
		}
	}
}
