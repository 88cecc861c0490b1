package catalog

import "encoding/json"

// Declared is what an upstream declared in its initialize result's capabilities at its
// last connect (MCP "Lifecycle": capabilities): each member as sent (nil: not declared),
// and its extensions (capabilities.extensions, SEP-1724) by identifier.
type Declared struct {
	Tools, Resources, Prompts, Completions, Logging json.RawMessage
	Extensions                                      map[string]json.RawMessage
}

// Declared returns the capabilities connection c's upstream declared; ok is false when
// they are not known yet (never connected) or are not a JSON object.
func (c *Connection) Declared() (d Declared, ok bool) {
	if len(c.Capabilities) == 0 || json.Unmarshal(c.Capabilities, &d) != nil {
		return Declared{}, false
	}
	return d, true
}

// Extension returns the settings connection c's upstream declared for extension id
// (SEP-1724: an object; nil when the upstream did not declare it, declared null, or its
// capabilities are not known).
func (c *Connection) Extension(id string) json.RawMessage {
	d, ok := c.Declared()
	if !ok {
		return nil
	}
	s := d.Extensions[id]
	if len(s) == 0 || string(s) == "null" {
		return nil
	}
	return s
}

// Served reports whether tool t can be served: its input schema is a JSON Schema of type
// "object", as MCP requires of a tool's inputSchema ("Tools": inputSchema). The refresh
// reports the others; the gateway neither lists nor forwards them.
func (t *Tool) Served() bool {
	var s struct {
		Type any `json:"type"`
	}
	return json.Unmarshal(t.InputSchema, &s) == nil && s.Type == "object"
}
