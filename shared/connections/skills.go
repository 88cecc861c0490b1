package connections

import (
	"context"
	"encoding/json"

	"github.com/agentpack/gateway/shared/apperr"
	"github.com/agentpack/gateway/shared/auth"
	"github.com/agentpack/gateway/shared/db"
	"github.com/agentpack/gateway/shared/derrors"
	"github.com/agentpack/gateway/shared/mcpclient"
)

// skillsExtension is the Skills extension's identifier (SEP-2640; docs/SKILLS.md).
const skillsExtension = "io.modelcontextprotocol/skills"

// Skill is one skill of a connection as the Marketplace shows it (GET
// /api/mcp-connections/{id}/skills): the uri of its SKILL.md, the name and description of
// its frontmatter, and how many files its manifest lists.
type Skill struct {
	URI         string `json:"uri"`
	Name        string `json:"name"`
	Description string `json:"description"`
	Files       int    `json:"files"`
}

// skillsSummary lists the skills of the upstream behind target during a refresh, when it
// declared the Skills extension (else nil, without asking), as the summary the Marketplace
// shows. ok is false when the listing failed: the refresh keeps what was stored (the
// listing is an extra, never the reason a refresh fails); the failure is logged.
func (s *Service) skillsSummary(ctx context.Context, target mcpclient.Target, info mcpclient.Info, connID string) (summary json.RawMessage, ok bool) {
	var caps struct {
		Extensions map[string]json.RawMessage `json:"extensions"`
	}
	if len(info.Capabilities) == 0 || json.Unmarshal(info.Capabilities, &caps) != nil || caps.Extensions[skillsExtension] == nil {
		return nil, true
	}
	entries, err := s.Upstreams.ListSkills(ctx, target)
	if err != nil {
		s.logger().WarnContext(ctx, "upstream skills/list failed; skills kept as they were", "connection_id", connID, "err", err)
		return nil, false
	}
	out := []Skill{}
	for _, e := range entries {
		var v struct {
			URI         string `json:"uri"`
			Frontmatter struct {
				Name        any `json:"name"`
				Description any `json:"description"`
			} `json:"frontmatter"`
			Resources []json.RawMessage `json:"resources"`
		}
		if json.Unmarshal(e, &v) != nil || v.URI == "" {
			continue
		}
		name, _ := v.Frontmatter.Name.(string)
		desc, _ := v.Frontmatter.Description.(string)
		out = append(out, Skill{URI: v.URI, Name: name, Description: desc, Files: len(v.Resources)})
	}
	b, err := json.Marshal(out)
	if err != nil {
		return nil, false
	}
	return b, true
}

// Skills returns connection id's skills as its last refresh listed them (empty when its
// upstream declares no skills or was not refreshed since). Errors: NOT_FOUND (also for a
// connection of another workspace), FORBIDDEN.
func (s *Service) Skills(ctx context.Context, p *auth.Principal, id string) (_ []Skill, err error) {
	defer derrors.Wrap(&err, "connections: skills of %s", id)
	if _, err := s.Get(ctx, p, id); err != nil {
		return nil, err
	}
	raw, err := db.ConnectionSkillsGet(ctx, s.Pool, id)
	if err != nil {
		return nil, err
	}
	out := []Skill{}
	if raw != nil {
		if err := json.Unmarshal(raw, &out); err != nil {
			return nil, apperr.Wrap(err, apperr.Internal, "stored skills are unreadable")
		}
	}
	return out, nil
}
