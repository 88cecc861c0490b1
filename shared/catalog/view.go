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
	ID            string            `json:"id" format:"uuid"`
	Name          string            `json:"name"`
	URL           string            `json:"url" doc:"Query values, userinfo and fragment show as \"[REDACTED]\" except to a superuser reading one entry or writing it."`
	TransportType string            `json:"transportType" enum:"streamable-http,sse"`
	Headers       map[string]string `json:"headers" doc:"Header templates the install should provide (values redacted)."`
	// HeaderNames are the header templates' names, sorted: what an install must provide.
	HeaderNames         []string   `json:"headerNames" doc:"The header templates' names, sorted."`
	Description         string     `json:"description"`
	Category            string     `json:"category"`
	Version             string     `json:"version"`
	Author              string     `json:"author"`
	VerificationTier    string     `json:"verificationTier" enum:"official,verified_community,unverified"`
	HealthStatus        *string    `json:"healthStatus" enum:"healthy,stale,down"`
	LastHealthCheck     *time.Time `json:"lastHealthCheck"`
	LastHealthError     *string    `json:"lastHealthError"`
	LastCommitDate      *time.Time `json:"lastCommitDate"`
	ConsecutiveFailures int        `json:"consecutiveFailures"`
	InstallCount        int        `json:"installCount"`
	IsPlaceholder       bool       `json:"isPlaceholder"`
	CreatedAt           time.Time  `json:"createdAt"`
	UpdatedAt           time.Time  `json:"updatedAt"`
	Installed           *bool      `json:"installed,omitempty" doc:"Only with ?workspaceId."`
	ConnectionID        *string    `json:"connectionId,omitempty" format:"uuid" doc:"The install's connection, when installed."`
	// InstallState is the install's connect state (db.Install.State: connected, failing,
	// never_connected), with Installed true: a failed first connect is not shown as a
	// plain "Installed".
	InstallState *string `json:"installState,omitempty" enum:"connected,failing,never_connected" doc:"The install's connect state, when installed: never_connected after a failed first connect, failing when the last connect failed after an earlier success."`
	// Source is "curated", "admin" or "registry" (docs/REGISTRY.md); a registry entry also
	// names its registry, its server name there and the registry's status (Deprecated
	// flags "deprecated"; "deleted" entries are not listed).
	Source         string  `json:"source" enum:"curated,admin,registry" doc:"Where the entry comes from: the curated seed, a superuser's REST write, or an MCP registry import (docs/REGISTRY.md)."`
	RegistryURL    *string `json:"registryUrl" doc:"The registry an imported entry came from (its base URL, or file:NAME)."`
	RegistryName   *string `json:"registryName" doc:"The server's name in its registry (e.g. io.github.owner/server)."`
	RegistryStatus *string `json:"registryStatus" enum:"active,deprecated,deleted"`
	// RegistryRemote is which of the server's remotes this entry is (0-based);
	// RegistryPublishedAt when the registry published this version.
	RegistryRemote      *int       `json:"registryRemote" doc:"Which of the server's remotes this entry is (0-based)."`
	RegistryPublishedAt *time.Time `json:"registryPublishedAt"`
	Deprecated          bool       `json:"deprecated" doc:"The registry marked this server deprecated: installs still work; prefer another."`
	// URLVariables are the install-time fields of a templated URL ({name} in url).
	URLVariables []db.URLVariable `json:"urlVariables" doc:"Install-time fields of a templated url ({name}): pass them as InstallInput.variables."`
	// DeclaredHeaders are the headers the server declares, with their secret flag.
	DeclaredHeaders []db.DeclaredHeader `json:"declaredHeaders" doc:"Headers the server declares (isSecret: a credential)."`
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
