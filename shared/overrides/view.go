package overrides

import (
	"encoding/json"
	"time"

	"github.com/agentpack/gateway/shared/db"
)

// View is an override as REST and the built-ins show it (openapi.json
// #/components/schemas/ToolOverride): the override's own fields (null: not overridden),
// the exposed name clients see (the override's name, else the generated one; "" when
// dormant without a name), whether it is Dormant (the upstream no longer lists the tool),
// and Upstream, the upstream's original as listed (nil when dormant).
type View struct {
	WorkspaceID  string          `json:"workspaceId"`
	ConnectionID string          `json:"connectionId"`
	Tool         string          `json:"tool"`
	ExposedName  string          `json:"exposedName"`
	Name         *string         `json:"name"`
	Title        *string         `json:"title"`
	Description  *string         `json:"description"`
	Hidden       bool            `json:"hidden"`
	Annotations  json.RawMessage `json:"annotations"`
	Dormant      bool            `json:"dormant"`
	Upstream     *Original       `json:"upstream"`
	CreatedBy    string          `json:"createdBy"`
	UpdatedBy    string          `json:"updatedBy"`
	CreatedAt    time.Time       `json:"createdAt"`
	UpdatedAt    time.Time       `json:"updatedAt"`
	// CatalogPending is true when the write is committed but the catalog rebuild failed
	// (the gateway catches up on the next rebuild).
	CatalogPending bool `json:"catalogPending,omitempty"`
}

// Original is the upstream's tool as listed: its generated exposed name, title,
// description, annotations and drift status.
type Original struct {
	ExposedName string          `json:"exposedName"`
	Title       string          `json:"title"`
	Description string          `json:"description"`
	Annotations json.RawMessage `json:"annotations"`
	Status      string          `json:"status"`
}

// NewView is the view of override o with its tool t as stored (nil: dormant).
func NewView(o *db.ToolOverride, t *db.ConnectionTool) View {
	v := View{WorkspaceID: o.WorkspaceID, ConnectionID: o.ConnectionID, Tool: o.UpstreamName, Name: o.ExposedName,
		Title: o.Title, Description: o.Description, Hidden: o.Hidden, Annotations: o.Annotations, Dormant: t == nil,
		CreatedBy: o.CreatedBy, UpdatedBy: o.UpdatedBy, CreatedAt: o.CreatedAt, UpdatedAt: o.UpdatedAt}
	if len(v.Annotations) == 0 {
		v.Annotations = nil
	}
	if t != nil {
		ann := t.Annotations
		if len(ann) == 0 {
			ann = nil
		}
		v.Upstream = &Original{ExposedName: t.ExposedName, Title: t.Title, Description: t.Description,
			Annotations: ann, Status: t.Status}
		v.ExposedName = t.ExposedName
	}
	if o.ExposedName != nil {
		v.ExposedName = *o.ExposedName
	}
	return v
}
