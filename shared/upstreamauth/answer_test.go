package upstreamauth_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/agentpack/gateway/shared/upstreamauth"
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
		{"2026-07-28", "2026-07-28", true},
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
	exp, _ := upstreamauth.Answer("2025-06-18", upstreamauth.NeedsAuthorization{ConnectionName: "Linear", AuthorizationURL: "u", Expired: true})
	if !strings.Contains(exp.Content[0].(*mcp.TextContent).Text, "expired") {
		t.Errorf("expired message: %+v", exp.Content[0])
	}
}
