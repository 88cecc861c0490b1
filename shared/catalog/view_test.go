package catalog

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentpack/gateway/shared/db"
)

func TestNewEntryView(t *testing.T) {
	status := "healthy"
	row := db.CatalogEntry{ID: "e1", Name: "n", URL: "https://u:p@x.example/mcp?key=secret", TransportType: "streamable-http",
		Headers: map[string]string{"Authorization": "Bearer real-secret"}, VerificationTier: "official",
		HealthStatus: &status, CreatedAt: time.Unix(0, 0).UTC(), UpdatedAt: time.Unix(0, 0).UTC()}
	tests := []struct {
		name       string
		row        db.CatalogEntry
		fullURL    bool
		urlSecrets bool // the URL keeps its query value
	}{
		{"redacted URL", row, false, false},
		{"full URL", row, true, true},
		{"no headers", func() db.CatalogEntry { r := row; r.Headers = nil; return r }(), false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := NewEntryView(&tt.row, tt.fullURL)
			raw, _ := json.Marshal(v)
			if strings.Contains(string(raw), "real-secret") {
				t.Errorf("header value leaked: %s", raw)
			}
			if got := strings.Contains(v.URL, "secret"); got != tt.urlSecrets {
				t.Errorf("URL %q: query value kept = %v, want %v", v.URL, got, tt.urlSecrets)
			}
			if v.Headers == nil {
				t.Error("headers nil, want {}")
			}
			if v.ID != tt.row.ID || v.HealthStatus != tt.row.HealthStatus || v.VerificationTier != "official" {
				t.Errorf("fields not copied: %+v", v)
			}
		})
	}
}

// TestEntryViewKeepsTheWireShape: the view has exactly the JSON members the row used to
// send (the REST shape before the view existed) plus the badge members and headerNames
// (which the built-in tools always showed; REST gained it when both took this view) and
// deprecated (the registry status's flag, docs/REGISTRY.md).
func TestEntryViewKeepsTheWireShape(t *testing.T) {
	keys := func(v any) []string {
		raw, _ := json.Marshal(v)
		var m map[string]any
		_ = json.Unmarshal(raw, &m)
		return slices.Sorted(maps.Keys(m))
	}
	yes, id := true, "c1"
	v := NewEntryView(&db.CatalogEntry{Headers: map[string]string{"X-Key": "sk-1", "Authorization": "Bearer t"}}, false)
	if !slices.Equal(v.HeaderNames, []string{"Authorization", "X-Key"}) {
		t.Errorf("headerNames %v", v.HeaderNames)
	}
	v.Installed, v.ConnectionID = &yes, &id
	want := append(keys(db.CatalogEntry{}), "connectionId", "installed", "headerNames", "deprecated")
	slices.Sort(want)
	if got := keys(v); !slices.Equal(got, want) {
		t.Errorf("view members %v, want %v", got, want)
	}
}
