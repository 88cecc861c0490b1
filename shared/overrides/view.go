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
	WorkspaceID  string          `json:"workspaceId" format:"uuid"`
	ConnectionID string          `json:"connectionId" format:"uuid"`
	Tool         string          `json:"tool" doc:"The upstream's own tool name."`
	ExposedName  string          `json:"exposedName" doc:"The name clients call: name, else the generated one (\"\" when dormant without a name)."`
	Name         *string         `json:"name" doc:"The override's exposed name; null: not renamed."`
	Title        *string         `json:"title" doc:"null: not overridden."`
	Description  *string         `json:"description" doc:"null: not overridden."`
	Hidden       bool            `json:"hidden"`
	Annotations  json.RawMessage `json:"annotations" type:"object" nullable:"true" doc:"Merged into the upstream's annotations member by member; a null member removes one."`
	Dormant      bool            `json:"dormant" doc:"The upstream no longer lists the tool; the override applies again when it returns."`
	Upstream     *Original       `json:"upstream" doc:"The upstream's original as listed; null when dormant."`
	CreatedBy    string          `json:"createdBy"`
	UpdatedBy    string          `json:"updatedBy"`
	CreatedAt    time.Time       `json:"createdAt"`
	UpdatedAt    time.Time       `json:"updatedAt"`
	// CatalogPending is true when the write is committed but the catalog rebuild failed
	// (the gateway catches up on the next rebuild).
	CatalogPending bool `json:"catalogPending,omitempty" doc:"Present and true when the write is committed but the catalog rebuild failed."`
}

// Original is the upstream's tool as listed: its generated exposed name, title,
// description, annotations and drift status.
type Original struct {
	ExposedName string          `json:"exposedName"`
	Title       string          `json:"title"`
	Description string          `json:"description"`
	Annotations json.RawMessage `json:"annotations" type:"object" nullable:"true"`
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
