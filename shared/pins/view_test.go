package pins

import (
	"encoding/json"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/agentpack/gateway/shared/db"
)

func jsonKeys(t *testing.T, v any) []string {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	return slices.Sorted(maps.Keys(m))
}

func TestNewPinView(t *testing.T) {
	ws, other, proj := "w1", "w2", "p1"
	pin := func(connWS, connProj *string, enabled bool) db.ChatPin {
		return db.ChatPin{ID: "p", ChatID: "c", ConnectionID: "k", ConnectionName: "K", ConnectionWorkspaceID: connWS,
			ConnectionProjectID: connProj, Enabled: enabled, CreatedBy: "a", ChatWorkspaceID: ws}
	}
	tests := []struct {
		name   string
		row    db.ChatPin
		scope  string
		usable bool
	}{
		{"global", pin(nil, nil, true), "global", true},
		{"chat's workspace", pin(&ws, nil, true), "workspace", true},
		{"disabled", pin(&ws, nil, false), "workspace", false},
		{"another workspace", pin(&other, nil, true), "workspace", false},
		{"project-scoped", pin(&ws, &proj, true), "project", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := NewPinView(&tt.row)
			if v.Scope != tt.scope || v.Usable != tt.usable || v.Enabled != tt.row.Enabled {
				t.Errorf("scope %q usable %v enabled %v, want %q %v %v", v.Scope, v.Usable, v.Enabled, tt.scope, tt.usable, tt.row.Enabled)
			}
			if v.ID != "p" || v.ChatID != "c" || v.ConnectionID != "k" || v.ConnectionName != "K" || v.CreatedBy != "a" {
				t.Errorf("fields not copied: %+v", v)
			}
		})
	}
}

// TestViewsKeepTheWireShape: PinView and ChatView have exactly the members the pins REST
// routes sent before they existed (pins.Pin, and the db.Chat row; openapi.json Pin and
// Chat), a chat's createdAt only when it was read.
func TestViewsKeepTheWireShape(t *testing.T) {
	pin := []string{"chatId", "connectionId", "connectionName", "createdAt", "createdBy", "enabled", "id", "scope", "usable"}
	if got := jsonKeys(t, NewPinView(&db.ChatPin{})); !slices.Equal(got, pin) {
		t.Errorf("pin members %v, want %v", got, pin)
	}
	now := time.Now()
	chat := db.Chat{ID: "c", WorkspaceID: "w", Title: "t", CreatedAt: &now}
	if got, want := jsonKeys(t, NewChatView(&chat)), jsonKeys(t, chat); !slices.Equal(got, want) || len(got) != 4 {
		t.Errorf("chat members %v, want the row's %v", got, want)
	}
	chat.CreatedAt = nil
	if got, want := jsonKeys(t, NewChatView(&chat)), []string{"id", "title", "workspaceId"}; !slices.Equal(got, want) {
		t.Errorf("chat without createdAt: members %v, want %v", got, want)
	}
}
