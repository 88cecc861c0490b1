package catalog

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"path"
	"slices"
	"strings"
	"time"
)

// The stored layout (docs/CATALOG.md): per workspace one index and one part per visible
// connection.
//
//	catalog/v2/workspaces/<ws>/index.json              the Index
//	catalog/v2/workspaces/<ws>/parts/<conn>.<hash>.json one Connection (JSON)
//
// A part's key carries the hash of its bytes, so a part object never changes once
// written: a reader that holds an index can fetch every part it names and gets exactly
// what the writer meant, and a reader that already holds a part with that hash needs not
// fetch it at all. A writer writes the changed parts first, then the index, then deletes
// the parts the new index no longer names; a reader that finds a part gone re-reads the
// index once.

// LayoutVersion is the index format version written in Index.Version.
const LayoutVersion = 2

// Index is the small object that names a workspace's parts in document order (by handle,
// bytewise), with the workspace-level fields of the Document.
type Index struct {
	Version            int         `json:"version"`
	WorkspaceID        string      `json:"workspaceId"`
	GeneratedAt        time.Time   `json:"generatedAt"`
	DiscoveryThreshold *int        `json:"discoveryThreshold,omitempty"`
	Policies           *Policies   `json:"policies,omitempty"`
	RateLimits         []RateLimit `json:"rateLimits,omitempty"`
	Parts              []PartRef   `json:"parts"`
}

// PartRef names one connection's part: the connection id, its handle (the sort key) and
// the hash of the part's bytes. A part stands alone at PartKey, or — when Pack is set —
// is bytes [Off, Off+Len) of the pack object at PackKey(ws, Pack), which a whole rebuild
// writes so that a cold read is one GET rather than one per connection.
//
// The summary fields let a reader serve the first tools/list page of a workspace without
// reading every part (Snapshot.FirstTools): Size is the part's bytes (0: the ref was
// written before summaries, and the reader falls back to the whole document), Tools its
// tool count, Unserved how many of them are not served (input schema without "type":
// "object", Tool.Served), First the smallest exposed name of a served tool ("" when none),
// Scope "project" and Project the project of a project-scoped connection (both empty
// otherwise: visible in every project).
type PartRef struct {
	ID       string `json:"id"`
	Handle   string `json:"handle"`
	Hash     string `json:"hash"`
	Pack     string `json:"pack,omitempty"`
	Off      int    `json:"off,omitempty"`
	Len      int    `json:"len,omitempty"`
	Size     int    `json:"size,omitempty"`
	Tools    int    `json:"tools,omitempty"`
	Unserved int    `json:"unserved,omitempty"`
	First    string `json:"first,omitempty"`
	Scope    string `json:"scope,omitempty"`
	Project  string `json:"project,omitempty"`
}

// summarized reports whether ref carries the summary fields (see PartRef).
func (ref PartRef) summarized() bool { return ref.Size > 0 }

// summarize sets ref's summary fields from c, whose part is size bytes.
func summarize(ref *PartRef, c *Connection, size int) {
	ref.Size, ref.Tools, ref.Unserved, ref.First, ref.Scope, ref.Project = size, len(c.Tools), 0, "", "", ""
	for i := range c.Tools {
		t := &c.Tools[i]
		if !t.Served() {
			ref.Unserved++
			continue
		}
		if ref.First == "" || t.ExposedName < ref.First {
			ref.First = t.ExposedName
		}
	}
	if c.Scope == "project" {
		ref.Scope, ref.Project = c.Scope, c.ProjectID
	}
}

// objectKey is the key of the object that holds ref's bytes in workspace ws.
func (ref PartRef) objectKey(ws string) string {
	if ref.Pack != "" {
		return PackKey(ws, ref.Pack)
	}
	return PartKey(ws, ref.ID, ref.Hash)
}

// IndexKey is the object key of workspace ws's index.
func IndexKey(ws string) string { return "catalog/v2/workspaces/" + path.Base(ws) + "/index.json" }

// PartKey is the object key of the part of connection id in workspace ws with content
// hash hash.
func PartKey(ws, id, hash string) string {
	return "catalog/v2/workspaces/" + path.Base(ws) + "/parts/" + path.Base(id) + "." + path.Base(hash) + ".json"
}

// PackKey is the object key of workspace ws's pack with content hash hash.
func PackKey(ws, hash string) string {
	return "catalog/v2/workspaces/" + path.Base(ws) + "/packs/" + path.Base(hash) + ".json"
}

// encodePart returns connection c's part bytes and their hash (hex SHA-256, 32 digits).
func encodePart(c *Connection) ([]byte, string, error) {
	data, err := json.Marshal(c)
	if err != nil {
		return nil, "", fmt.Errorf("catalog: encode part %s: %w", c.ID, err)
	}
	sum := sha256.Sum256(data)
	return data, hex.EncodeToString(sum[:16]), nil
}

// decodePart parses and checks one part: its id must be ref's, its tool names non-empty
// and unique, its input schemas objects.
func decodePart(data []byte, ref PartRef) (Connection, error) {
	var c Connection
	if err := json.Unmarshal(data, &c); err != nil {
		return c, fmt.Errorf("catalog: decode part %s: %w", ref.ID, err)
	}
	if c.ID != ref.ID {
		return c, fmt.Errorf("catalog: part %s holds connection %q", ref.ID, c.ID)
	}
	if c.Tools == nil {
		c.Tools = []Tool{}
	}
	if err := validate(&Document{Connections: []Connection{c}}); err != nil {
		return c, err
	}
	return c, nil
}

// decodeIndex parses and checks an index: version LayoutVersion, unique non-empty ids
// and hashes present.
func decodeIndex(data []byte) (*Index, error) {
	var ix Index
	if err := json.Unmarshal(data, &ix); err != nil {
		return nil, fmt.Errorf("catalog: decode index: %w", err)
	}
	if ix.Version != LayoutVersion {
		return nil, fmt.Errorf("catalog: unsupported index version %d", ix.Version)
	}
	seen := make(map[string]bool, len(ix.Parts))
	for _, p := range ix.Parts {
		if p.ID == "" || p.Hash == "" || seen[p.ID] {
			return nil, fmt.Errorf("catalog: index: missing or duplicate part %q", p.ID)
		}
		if p.Pack != "" && (p.Off < 0 || p.Len <= 0) {
			return nil, fmt.Errorf("catalog: index: part %q has a bad pack range", p.ID)
		}
		seen[p.ID] = true
	}
	return &ix, nil
}

// sortParts orders parts as documents are: by handle, bytewise (then id, for a total
// order).
func sortParts(parts []PartRef) {
	slices.SortFunc(parts, func(a, b PartRef) int {
		if c := strings.Compare(a.Handle, b.Handle); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
}

// sortConnections orders a document's connections like sortParts.
func sortConnections(cs []Connection) {
	slices.SortStableFunc(cs, func(a, b Connection) int {
		if c := strings.Compare(a.Handle, b.Handle); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
}
