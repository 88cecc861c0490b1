package catalog

import (
	"slices"
	"time"

	"github.com/agentpack/gateway/shared/db"
	"github.com/agentpack/gateway/shared/headers"
)

// EntryView is a catalog entry as the REST API returns it (openapi.json
// #/components/schemas/CatalogEntry): header templates redacted (an admin may have put a
// real secret in one), the URL's query values, userinfo and fragment redacted unless the
// caller may see it whole (a superuser reading one entry or writing it), plus, when the
// list was asked for a workspace, the "Installed" badge and that installation's
// connection id. Times are RFC 3339; absent health data is null. The gateway's built-in
// tools (agentpack_catalog_list, agentpack_catalog_get) and the agentpack://catalog
// resource show the same view.
type EntryView struct {
	ID            string            `json:"id"`
	Name          string            `json:"name"`
	URL           string            `json:"url"`
	TransportType string            `json:"transportType"`
	Headers       map[string]string `json:"headers"`
	// HeaderNames are the header templates' names, sorted: what an install must provide.
	HeaderNames         []string   `json:"headerNames"`
	Description         string     `json:"description"`
	Category            string     `json:"category"`
	Version             string     `json:"version"`
	Author              string     `json:"author"`
	VerificationTier    string     `json:"verificationTier"`
	HealthStatus        *string    `json:"healthStatus"`
	LastHealthCheck     *time.Time `json:"lastHealthCheck"`
	LastHealthError     *string    `json:"lastHealthError"`
	LastCommitDate      *time.Time `json:"lastCommitDate"`
	ConsecutiveFailures int        `json:"consecutiveFailures"`
	InstallCount        int        `json:"installCount"`
	IsPlaceholder       bool       `json:"isPlaceholder"`
	CreatedAt           time.Time  `json:"createdAt"`
	UpdatedAt           time.Time  `json:"updatedAt"`
	Installed           *bool      `json:"installed,omitempty"`
	ConnectionID        *string    `json:"connectionId,omitempty"`
	// InstallState is the install's connect state (db.Install.State: connected, failing,
	// never_connected), with Installed true: a failed first connect is not shown as a
	// plain "Installed".
	InstallState *string `json:"installState,omitempty"`
	// Source is "curated", "admin" or "registry" (docs/REGISTRY.md); a registry entry also
	// names its registry, its server name there and the registry's status (Deprecated
	// flags "deprecated"; "deleted" entries are not listed).
	Source         string  `json:"source"`
	RegistryURL    *string `json:"registryUrl"`
	RegistryName   *string `json:"registryName"`
	RegistryStatus *string `json:"registryStatus"`
	// RegistryRemote is which of the server's remotes this entry is (0-based);
	// RegistryPublishedAt when the registry published this version.
	RegistryRemote      *int       `json:"registryRemote"`
	RegistryPublishedAt *time.Time `json:"registryPublishedAt"`
	Deprecated          bool       `json:"deprecated"`
	// URLVariables are the install-time fields of a templated URL ({name} in url).
	URLVariables []db.URLVariable `json:"urlVariables"`
	// DeclaredHeaders are the headers the server declares, with their secret flag.
	DeclaredHeaders []db.DeclaredHeader `json:"declaredHeaders"`
}

// NewEntryView is the view of row e: fullURL false redacts the URL (headers.RedactURL);
// header values are always redacted (headers.Redact), and absent headers are {}.
// Installed and ConnectionID are left for the caller to set.
func NewEntryView(e *db.CatalogEntry, fullURL bool) EntryView {
	u := e.URL
	if !fullURL {
		u = headers.RedactURL(u)
	}
	h := headers.Redact(e.Headers)
	names := make([]string, 0, len(e.Headers))
	for k := range e.Headers {
		names = append(names, k)
	}
	slices.Sort(names)
	return EntryView{ID: e.ID, Name: e.Name, URL: u, TransportType: e.TransportType, Headers: h, HeaderNames: names,
		Description: e.Description, Category: e.Category, Version: e.Version, Author: e.Author,
		VerificationTier: e.VerificationTier, HealthStatus: e.HealthStatus, LastHealthCheck: e.LastHealthCheck,
		LastHealthError: e.LastHealthError, LastCommitDate: e.LastCommitDate, ConsecutiveFailures: e.ConsecutiveFailures,
		InstallCount: e.InstallCount, IsPlaceholder: e.IsPlaceholder, CreatedAt: e.CreatedAt, UpdatedAt: e.UpdatedAt,
		Source: e.Source, RegistryURL: e.RegistryURL, RegistryName: e.RegistryName, RegistryStatus: e.RegistryStatus,
		RegistryRemote: e.RegistryRemote, RegistryPublishedAt: e.RegistryPublishedAt,
		Deprecated:   e.RegistryStatus != nil && *e.RegistryStatus == "deprecated",
		URLVariables: nonNilSlice(e.URLVariables), DeclaredHeaders: nonNilSlice(e.DeclaredHeaders)}
}

func nonNilSlice[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
