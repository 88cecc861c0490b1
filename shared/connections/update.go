package connections

import (
	"context"
	"strings"

	"github.com/agentpack/gateway/shared/apperr"
	"github.com/agentpack/gateway/shared/auth"
	"github.com/agentpack/gateway/shared/db"
	"github.com/agentpack/gateway/shared/derrors"
	"github.com/agentpack/gateway/shared/headers"
	"github.com/agentpack/gateway/shared/text"
)

// lockConnection serialises writes to connection id (update, toggle, delete).
func lockConnection(ctx context.Context, tx db.Tx, id string) error {
	return db.LockKey(ctx, tx, "connection", id)
}

// ---- update ----

// UpdateInput is the body of PUT /api/mcp-connections/{id}: a partial update, absent
// fields are left as they are. Headers replaces the whole header map ({} clears it); a
// value equal to headers.RedactedValue ("[REDACTED]") keeps the stored value of that name,
// so a client can send back what GET returned. Scope and source cannot change.
type UpdateInput struct {
	Name          *string           `json:"name,omitempty" minLength:"1" maxLength:"100"`
	URL           *string           `json:"url,omitempty" maxLength:"2048"`
	TransportType *string           `json:"transportType,omitempty" enum:"streamable-http,sse"`
	Headers       map[string]string `json:"headers,omitempty" doc:"Header name → value. Names are HTTP tokens; hop-by-hop and gateway-owned names (Host, Connection, Transfer-Encoding, Content-*, Mcp-*, Proxy-*, X-Forwarded-*, ...) are refused; values have no CR, LF or NUL; at most 32 headers, 8 KiB per value, 32 KiB in all. Values are secrets: answers show \"[REDACTED]\"."`
	Enabled       *bool             `json:"enabled,omitempty"`
}

// Update changes connection id (admin; PUT /{id}: disconnect, and reconnect when
// enabled). New URL, transport and headers pass the same checks as on create (docs/DESIGN.md §9);
// changing URL or transport forgets the remembered transport. It logs
// mcp.connection_updated, drops the cached upstream session, connects again when the
// connection is enabled (a failure is recorded in Outcome.Connect, not returned) and
// rebuilds the affected catalog documents.
// Errors: VALIDATION_ERROR, FORBIDDEN (member; global without superuser), NOT_FOUND
// (unknown or another workspace's), UNAVAILABLE.
func (s *Service) Update(ctx context.Context, p *auth.Principal, id string, in UpdateInput) (_ *Outcome, err error) {
	defer derrors.Wrap(&err, "connections: update %s", id)
	if err := auth.RequireAdmin(p); err != nil {
		return nil, err
	}
	if in.Name != nil {
		if err := validateName(*in.Name); err != nil {
			return nil, err
		}
		n := strings.TrimSpace(*in.Name)
		in.Name = &n
	}
	var c *db.Connection
	err = db.InTx(ctx, s.Pool, func(tx db.Tx) error {
		if err := lockConnection(ctx, tx, id); err != nil {
			return err
		}
		old, err := s.writable(ctx, tx, p, id)
		if err != nil {
			return err
		}
		u := &db.ConnectionUpdate{Name: in.Name, URL: in.URL, TransportType: in.TransportType, Enabled: in.Enabled}
		changed := []string{}
		url, transport, h := old.URL, old.TransportType, old.Headers
		if in.URL != nil {
			url = *in.URL
			changed = append(changed, "url")
		}
		if in.TransportType != nil {
			transport = *in.TransportType
			changed = append(changed, "transportType")
		}
		if in.Headers != nil {
			if h, err = mergeRedacted(old.Headers, in.Headers); err != nil {
				return err
			}
			u.Headers = h
			changed = append(changed, "headers")
		}
		// Check what changes (a header edit is not refused for a URL that an older,
		// laxer policy accepted; the connect-time checks cover the whole target).
		if in.URL != nil || in.TransportType != nil {
			if err := s.validateTarget(ctx, url, transport, nil); err != nil {
				return err
			}
		}
		if in.Headers != nil {
			if err := headers.Validate(h); err != nil {
				return err
			}
		}
		if in.Name != nil {
			changed = append(changed, "name")
		}
		if in.Enabled != nil {
			changed = append(changed, "enabled")
		}
		if c, err = db.ConnectionUpdateByID(ctx, tx, id, u); err != nil {
			return err
		}
		if (in.URL != nil && url != old.URL) || (in.TransportType != nil && transport != old.TransportType) {
			// Another server now answers: the old server's tool definitions (and their
			// approvals) must not stay advertised while calls go to the new one. The
			// refresh below lists the new server's tools; names stay deterministic.
			if err := db.ConnectionToolsDelete(ctx, tx, id); err != nil {
				return err
			}
			changed = append(changed, "tools_cleared")
		}
		return logEvent(ctx, tx, p, "mcp.connection_updated", c, map[string]any{"changed": changed})
	})
	if err != nil {
		return nil, err
	}
	s.Upstreams.Disconnect(c.ID)
	return s.afterWrite(ctx, p, c)
}

// mergeRedacted returns next with every "[REDACTED]" value replaced by the stored value of
// the same name (case-insensitive); a redacted value for a name not stored is refused.
func mergeRedacted(old, next map[string]string) (map[string]string, error) {
	out := make(map[string]string, len(next))
	for name, v := range next {
		if v == headers.RedactedValue {
			found := false
			for on, ov := range old {
				if strings.EqualFold(on, name) {
					v, found = ov, true
					break
				}
			}
			if !found {
				return nil, apperr.New(apperr.Validation, "headers: %q has the placeholder value %s but no stored value to keep",
					text.Clip(name, 64), headers.RedactedValue).WithDetails(map[string]string{"header": text.Clip(name, 64)})
			}
		}
		out[name] = v
	}
	return out, nil
}

// ---- toggle ----

// Toggle flips connection id's enabled flag (admin; POST /{id}/toggle), logs
// mcp.connection_toggled, drops the cached session, connects again when now enabled (a
// failure is recorded, not returned) and rebuilds the catalog: a disabled connection's
// tools leave the gateway, its tool rows (frozen names, approvals) are kept.
// Errors: as Update.
func (s *Service) Toggle(ctx context.Context, p *auth.Principal, id string) (_ *Outcome, err error) {
	defer derrors.Wrap(&err, "connections: toggle %s", id)
	var c *db.Connection
	err = db.InTx(ctx, s.Pool, func(tx db.Tx) error {
		if err := auth.RequireAdmin(p); err != nil {
			return err
		}
		if err := lockConnection(ctx, tx, id); err != nil {
			return err
		}
		old, err := s.writable(ctx, tx, p, id)
		if err != nil {
			return err
		}
		enabled := !old.Enabled
		if c, err = db.ConnectionUpdateByID(ctx, tx, id, &db.ConnectionUpdate{Enabled: &enabled}); err != nil {
			return err
		}
		return logEvent(ctx, tx, p, "mcp.connection_toggled", c, map[string]any{"enabled": enabled})
	})
	if err != nil {
		return nil, err
	}
	s.Upstreams.Disconnect(c.ID)
	return s.afterWrite(ctx, p, c)
}

// ---- delete and uninstall ----

// ---- test, refresh, approve ----

// ---- statuses ----
