package registry

// The documents an import reads: the parts of server.json (schema 2025-12-11) and of the
// registry's list item the catalog uses, the checks one document must pass, and the refusals
// the report shows.

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"strings"
	"time"

	"github.com/agentpack/gateway/shared/text"
)

// document is one list item: the server and the registry's metadata. A bare server.json
// decodes with Server empty and is read as the server itself (status active).
type document struct {
	Server *server `json:"server"`
	Meta   struct {
		Official *struct {
			Status      string     `json:"status"`
			PublishedAt *time.Time `json:"publishedAt"`
			IsLatest    *bool      `json:"isLatest"`
		} `json:"io.modelcontextprotocol.registry/official"`
	} `json:"_meta"`
}

// server is the part of server.json (schema 2025-12-11) the catalog uses.
type server struct {
	Name        string   `json:"name"`
	Title       string   `json:"title"`
	Description string   `json:"description"`
	Version     string   `json:"version"`
	WebsiteURL  string   `json:"websiteUrl"`
	Remotes     []remote `json:"remotes"`
	Packages    []any    `json:"packages"`
	// VersionDetail is the pre-2025-09-29 shape of version ({"version": …}), still found
	// in published documents; read only to say why such a document is refused.
	VersionDetail any `json:"version_detail"`
}

type remote struct {
	Type      string              `json:"type"`
	URL       string              `json:"url"`
	Headers   []header            `json:"headers"`
	Variables map[string]variable `json:"variables"`
}

type header struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	IsRequired  bool   `json:"isRequired"`
	IsSecret    bool   `json:"isSecret"`
	Value       string `json:"value"`
}

type variable struct {
	Description string   `json:"description"`
	IsRequired  bool     `json:"isRequired"`
	Default     string   `json:"default"`
	Choices     []string `json:"choices"`
	Format      string   `json:"format"`
	IsSecret    bool     `json:"isSecret"`
}

// Rules of server.json 2025-12-11 the import checks (the schema's patterns and limits).
var (
	serverName   = regexp.MustCompile(`^[a-zA-Z0-9.-]+/[a-zA-Z0-9._-]+$`)
	variableName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]{0,63}$`)
	templateRef  = regexp.MustCompile(`\{([^{}]*)\}`)
)

// parsed is one document that passed the checks.
type parsed struct {
	index       int
	srv         *server
	status      string
	publishedAt *time.Time
	latest      bool
}

// parse checks one document; the error is the reason it is refused.
func parse(i int, raw json.RawMessage) (*parsed, error) {
	if len(raw) > MaxDocumentBytes {
		return nil, refuse("the document is %d bytes, at most %d", len(raw), MaxDocumentBytes)
	}
	var d document
	if err := json.Unmarshal(raw, &d); err != nil {
		return nil, malformed(err)
	}
	p := &parsed{index: i, srv: d.Server, status: "active", latest: true}
	if p.srv == nil { // a bare server.json
		var s server
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, malformed(err)
		}
		p.srv = &s
	}
	if o := d.Meta.Official; o != nil {
		if o.Status != "" {
			p.status = o.Status
		}
		p.publishedAt = o.PublishedAt
		if o.IsLatest != nil {
			p.latest = *o.IsLatest
		}
	}
	s := p.srv
	switch {
	case !serverName.MatchString(s.Name) || len(s.Name) > 200:
		return nil, refuse("name %q is not a registry server name (namespace/name, at most 200 characters)", text.Clip(s.Name, 80))
	case s.Version == "" && s.VersionDetail != nil:
		return nil, refuse("no version: the document uses the version_detail member of the schema before 2025-09-29 (server.json 2025-12-11 has version)")
	case s.Version == "" || len(s.Version) > 100:
		return nil, refuse("version must be 1 to 100 characters")
	case p.status != "active" && p.status != "deprecated" && p.status != "deleted":
		return nil, refuse("status %q is not active, deprecated or deleted", text.Clip(p.status, 40))
	}
	return p, nil
}

// malformed is the refusal of a document that does not decode: the member and the JSON
// type found when a member has the wrong type (never Go type names), else the decoder's
// message.
func malformed(err error) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		want := "of another type"
		switch te.Type.Kind() {
		case reflect.String:
			want = "a string"
		case reflect.Slice:
			want = "an array"
		case reflect.Struct, reflect.Map, reflect.Pointer:
			want = "an object"
		case reflect.Bool:
			want = "a boolean"
		}
		field := strings.TrimPrefix(strings.TrimPrefix(te.Field, "server."), "_meta.")
		return refuse("malformed document: member %s is a JSON %s, it must be %s", text.Clip(field, 100), te.Value, want)
	}
	return refuse("malformed document: %s", text.Clip(err.Error(), 200))
}

// refusal is the reason one document or remote is refused (the report shows it).
type refusal struct{ msg string }

func (r *refusal) Error() string { return r.msg }

func refuse(format string, args ...any) error { return &refusal{msg: fmt.Sprintf(format, args...)} }

func later(a, b *time.Time) bool { return a != nil && (b == nil || a.After(*b)) }

// peekName is a refused document's server name when one can be read (for the report).
func peekName(raw json.RawMessage) string {
	if len(raw) > MaxDocumentBytes {
		return ""
	}
	var d struct {
		Name   any `json:"name"`
		Server struct {
			Name any `json:"name"`
		} `json:"server"`
	}
	_ = json.Unmarshal(raw, &d)
	for _, n := range []any{d.Server.Name, d.Name} {
		if s, ok := n.(string); ok {
			return text.Clip(s, 200)
		}
	}
	return ""
}
