// Package tooldrift holds the rules of a connection's tool list (docs/DESIGN.md §3, §6) as
// pure functions: what counts as a changed tool definition (Digest), and what a new
// listing of an upstream's tools does to the stored list (Plan): new tools get a frozen
// exposed name and start active or pending approval, a tool whose definition differs
// from the approved one drifts (withheld from the gateway until approved), one back to
// its approved definition is restored, and tools no longer listed are removed.
//
// It depends on nothing but shared/names, so the storage package (shared/db) applies it.
package tooldrift

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

	"github.com/agentpack/gateway/shared/names"
)

// Tool statuses (docs/DESIGN.md §6 drift). Only active tools are served by the gateway.
const (
	Active  = "active"  // approved definition: served
	Drifted = "drifted" // definition differs from the approved one: withheld until approved
	Pending = "pending" // new tool on a connection whose new tools need approval: withheld
)

// Definition is an upstream tool definition as listed. The raw members are JSON as the
// upstream sent them (nil when absent).
type Definition struct {
	Name         string
	Title        string
	Description  string
	InputSchema  json.RawMessage
	OutputSchema json.RawMessage
	Annotations  json.RawMessage
	// Whole is the upstream's whole tool object (nil when unknown).
	Whole json.RawMessage
}

// Digest is the definition digest of d (docs/DESIGN.md §6), 64 lower-case hex digits: the
// SHA-256 of the canonical JSON of d.Whole when known — every member, icons, execution
// and _meta included — else of name, title, description, schemas and annotations. The
// JSON is canonical (object keys sorted, insignificant whitespace dropped), so
// formatting and key order are not a change; a member that is not valid JSON counts as
// its bytes.
func Digest(d Definition) string {
	canon := func(raw json.RawMessage) any {
		if len(raw) == 0 {
			return nil
		}
		var v any
		if json.Unmarshal(raw, &v) != nil {
			return string(raw)
		}
		return v
	}
	if v := canon(d.Whole); v != nil {
		b, _ := json.Marshal(v)
		sum := sha256.Sum256(b)
		return hex.EncodeToString(sum[:])
	}
	b, _ := json.Marshal(map[string]any{
		"name": d.Name, "title": d.Title, "description": d.Description,
		"inputSchema": canon(d.InputSchema), "outputSchema": canon(d.OutputSchema),
		"annotations": canon(d.Annotations),
	})
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// Stored is one tool of a connection as last stored.
type Stored struct {
	UpstreamName     string
	ExposedName      string
	Status           string // Active, Drifted or Pending
	DefinitionDigest string // digest of the definition last listed
	ApprovedDigest   string // digest last approved ("" while pending)
}

// Listed is one tool of a new listing: its upstream name and Digest.
type Listed struct {
	Name   string
	Digest string
}

// Write is what a Plan does to one listed tool: insert it (New) or update the stored row.
type Write struct {
	// Index is the tool's position in the listing passed to Plan.
	Index int
	// New: insert a row; else update the stored row of the same upstream name.
	New bool
	// ExposedName is the name given to a new tool (empty for an update: names are frozen).
	ExposedName string
	// Status is the tool's status after the sync.
	Status string
	// ApprovedDigest is a new tool's approved digest: its own digest when it starts
	// active, "" when pending (empty for an update: approval is not changed by a sync).
	ApprovedDigest string
}

// Sync is the outcome of Plan: the row writes in listing order, the upstream names whose
// rows are deleted, and what changed for the caller to report.
type Sync struct {
	Writes  []Write
	Deletes []string
	// Added, Removed, Drifted and Restored are upstream names: new tools, tools no longer
	// listed, tools whose definition newly differs from the approved one (a drifted tool
	// listed again with the same drifted definition is not reported twice), and drifted
	// tools back to their approved definition.
	Added, Removed, Drifted, Restored []string
}

// Plan decides what listing listed does to stored, connection handle's stored tools
// (docs/DESIGN.md §3, §6):
//
//   - a name listed twice counts once (the first);
//   - a new tool gets names.Unique(handle, name) among the exposed names of stored and
//     of the tools added before it — frozen from then on, even if the handle changes —
//     and starts Active with its digest approved, or Pending with none when
//     newNeedApproval;
//   - a stored Pending tool stays pending whatever its definition;
//   - a tool whose digest differs from its approved digest is Drifted (reported unless it
//     was already drifted with this same definition);
//   - a Drifted tool whose digest is back to the approved one is Active again (Restored);
//   - a stored tool not listed is deleted (Removed), after the writes.
func Plan(stored []Stored, listed []Listed, handle string, newNeedApproval bool) Sync {
	byName := make(map[string]*Stored, len(stored))
	// Exposed names already used by this connection (frozen ones included, and those of
	// tools about to be removed: their rows still exist when the new ones are inserted).
	taken := make(map[string]bool, len(stored)+len(listed))
	for i := range stored {
		byName[stored[i].UpstreamName] = &stored[i]
		taken[stored[i].ExposedName] = true
	}
	var s Sync
	seen := make(map[string]bool, len(listed))
	for i, l := range listed {
		if seen[l.Name] {
			continue
		}
		seen[l.Name] = true
		old := byName[l.Name]
		if old == nil {
			exposed := names.Unique(handle, l.Name, func(n string) bool { return taken[n] })
			taken[exposed] = true
			w := Write{Index: i, New: true, ExposedName: exposed, Status: Active, ApprovedDigest: l.Digest}
			if newNeedApproval {
				w.Status, w.ApprovedDigest = Pending, ""
			}
			s.Writes = append(s.Writes, w)
			s.Added = append(s.Added, l.Name)
			continue
		}
		status := old.Status
		switch {
		case old.Status == Pending:
		case l.Digest != old.ApprovedDigest:
			if old.Status != Drifted || l.Digest != old.DefinitionDigest {
				s.Drifted = append(s.Drifted, l.Name)
			}
			status = Drifted
		case old.Status == Drifted:
			status = Active
			s.Restored = append(s.Restored, l.Name)
		}
		s.Writes = append(s.Writes, Write{Index: i, Status: status})
	}
	for _, old := range stored {
		if !seen[old.UpstreamName] {
			s.Deletes = append(s.Deletes, old.UpstreamName)
			s.Removed = append(s.Removed, old.UpstreamName)
		}
	}
	return s
}
