package upstreamauth_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/agentpack/gateway/shared/upstreamauth"
	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestAnswer(t *testing.T) {
	t.Parallel()
	r := upstreamauth.NeedsAuthorization{ConnectionName: "Linear", AuthorizationURL: "https://auth.example/authorize?state=s"}
	tests := []struct {
		name, version string
		wantError     bool
	}{
		{"2025-11-25", "2025-11-25", true},
		{"2025-06-18", "2025-06-18", false},
		{"2025-03-26", "2025-03-26", false},
		{"unknown", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := upstreamauth.Answer(tt.version, r)
			if (res == nil) == (err == nil) {
				t.Fatalf("want exactly one of result and error: %v %v", res, err)
			}
			if !tt.wantError {
				if err != nil || !res.IsError || len(res.Content) != 1 ||
					!strings.Contains(res.Content[0].(*mcp.TextContent).Text, r.AuthorizationURL) {
					t.Fatalf("result = %+v, %v", res, err)
				}
				return
			}
			var je *jsonrpc.Error
			if !errors.As(err, &je) || je.Code != -32042 {
				t.Fatalf("error = %v", err)
			}
			var data struct {
				Elicitations []struct{ Mode, URL, Message, ElicitationID string }
			}
			if err := json.Unmarshal(je.Data, &data); err != nil || len(data.Elicitations) != 1 {
				t.Fatalf("data = %s (%v)", je.Data, err)
			}
			el := data.Elicitations[0]
			if el.Mode != "url" || el.URL != r.AuthorizationURL || el.ElicitationID == "" || !strings.Contains(el.Message, "Linear") {
				t.Errorf("elicitation = %+v", el)
			}
		})
	}
	t.Run("2026-07-28", func(t *testing.T) {
		// No -32042 (MUST NOT be emitted at that revision): an InputRequiredResult with one
		// URL-mode elicitation/create, without elicitationId (not in that revision's params).
		res, err := upstreamauth.Answer("2026-07-28", r)
		if err != nil || res == nil || res.IsError || len(res.Content) != 0 || len(res.InputRequests) != 1 {
			t.Fatalf("answer = %+v, %v", res, err)
		}
		b, err := upstreamauth.InputRequired(res, "agentpack.rs1.x")
		if err != nil {
			t.Fatal(err)
		}
		var got map[string]any
		_ = json.Unmarshal(b, &got)
		want := map[string]any{"resultType": "input_required", "requestState": "agentpack.rs1.x",
			"inputRequests": map[string]any{upstreamauth.InputKey: map[string]any{"method": "elicitation/create",
				"params": map[string]any{"mode": "url", "url": r.AuthorizationURL, "message": upstreamauth.AnswerText(res)}}}}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("InputRequiredResult (-want +got):\n%s", diff)
		}
		if !strings.Contains(upstreamauth.AnswerText(res), "Linear") || !strings.Contains(upstreamauth.AnswerText(res), r.AuthorizationURL) {
			t.Errorf("message = %q", upstreamauth.AnswerText(res))
		}
	})
	exp, _ := upstreamauth.Answer("2025-06-18", upstreamauth.NeedsAuthorization{ConnectionName: "Linear", AuthorizationURL: "u", Expired: true})
	if !strings.Contains(exp.Content[0].(*mcp.TextContent).Text, "expired") {
		t.Errorf("expired message: %+v", exp.Content[0])
	}
}

func TestDeclined(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]bool{
		`{"agentpack_authorize":{"action":"decline"}}`: true,
		`{"agentpack_authorize":{"action":"cancel"}}`:  true,
		`{"agentpack_authorize":{"action":"accept"}}`:  false,
		`{"other":{"action":"decline"}}`:               false,
		`[1]`:                                          false,
		``:                                             false,
	} {
		if got := upstreamauth.Declined(json.RawMessage(in)); got != want {
			t.Errorf("Declined(%s) = %v", in, got)
		}
	}
}
