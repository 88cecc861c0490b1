package headers

import (
	"net/url"
	"regexp"
	"sort"
	"strings"

	"github.com/agentpack/gateway/shared/apperr"
)

// Secrets in upstream URLs. Some MCP servers take their API key in the
// URL's query string (https://host/mcp?api_key=…), and some in the userinfo or the
// fragment. A connection's URL is therefore as secret as its headers: only the REST
// connection detail shows it whole, to an admin, who is the one who edits it. Everything
// else — logs, error texts, last_error, health errors, event payloads, built-in answers —
// shows it through RedactURL, and any text that may quote it or a header value goes
// through Scrub (or, for log lines, ScrubURLs) first. One token, RedactedValue, marks every
// redaction.

// RedactURL returns raw with every query value, the userinfo and the fragment replaced by
// RedactedValue; scheme, host, port, path and the query's parameter names stay, so that a
// reader still sees which endpoint and which parameters are meant:
//
//	https://u:p@host/mcp?api_key=abc&x=1#frag → https://[REDACTED]@host/mcp?api_key=[REDACTED]&x=[REDACTED]#[REDACTED]
//
// A URL without any of those comes back unchanged. Text that does not parse as a URL with
// a host comes back as RedactedValue (it could be anything). "" stays "".
func RedactURL(raw string) string {
	if raw == "" {
		return ""
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return RedactedValue
	}
	if u.User == nil && u.RawQuery == "" && !u.ForceQuery && u.Fragment == "" && u.RawFragment == "" {
		return raw
	}
	var b strings.Builder
	b.WriteString(u.Scheme)
	b.WriteString("://")
	if u.User != nil {
		b.WriteString(RedactedValue)
		b.WriteByte('@')
	}
	b.WriteString(u.Host)
	b.WriteString(u.EscapedPath())
	if u.RawQuery != "" || u.ForceQuery {
		b.WriteByte('?')
		b.WriteString(redactQuery(u.RawQuery))
	}
	if u.Fragment != "" || u.RawFragment != "" {
		b.WriteString("#" + RedactedValue)
	}
	return b.String()
}

// redactQuery keeps the parameter names of a raw query (in their order, as written) and
// replaces each value by RedactedValue. A parameter without "=" is a bare name and may be
// the secret itself (?abc123), so it is redacted too.
func redactQuery(raw string) string {
	if raw == "" {
		return ""
	}
	parts := strings.Split(raw, "&")
	for i, p := range parts {
		if p == "" {
			continue
		}
		name, _, found := strings.Cut(p, "=")
		if !found {
			parts[i] = RedactedValue
			continue
		}
		parts[i] = name + "=" + RedactedValue
	}
	return strings.Join(parts, "&")
}

// PublicURL returns scheme, host and path of raw only (no userinfo, query or fragment), for
// answers whose reader has no use for the parameters, e.g. a member's view of a connection.
// Text that does not parse as a URL with a host gives "".
func PublicURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return ""
	}
	return (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path, RawPath: u.RawPath}).String()
}

// urlInText finds http(s) URLs in free text (an error chain, a log message): up to the first
// whitespace, quote, or angle bracket. Go's net/http quotes them ("Post \"…\": dial tcp …").
var urlInText = regexp.MustCompile(`(?i)\bhttps?://[^\s"'<>\x60]+`)

// ScrubURLs returns text with every http(s) URL in it passed through RedactURL. It is what
// the logger applies to every string and error it writes (shared/logx), because go-sdk and
// net/http quote the whole request URL, query included, in their errors. Text without "://"
// is returned as is, cheaply.
func ScrubURLs(text string) string {
	if !strings.Contains(text, "://") {
		return text
	}
	return urlInText.ReplaceAllStringFunc(text, func(m string) string {
		// A URL quoted at the end of a sentence or in parentheses keeps its punctuation.
		trail := ""
		for len(m) > 0 && strings.ContainsRune(".,;:)]}", rune(m[len(m)-1])) {
			trail = m[len(m)-1:] + trail
			m = m[:len(m)-1]
		}
		return RedactURL(m) + trail
	})
}

// SecretsOf returns the secret strings of an upstream target: every non-blank header value
// of h, and from rawURL every query value (as written and decoded), the userinfo (user and
// password) and the fragment. URL parts shorter than minURLSecret bytes are left out: a
// query such as ?format=json or ?v=2 carries no credential, and redacting "json" or "2"
// everywhere would shred the text without protecting anything (the URL itself is redacted
// whole wherever it appears, by ScrubURLs). Longest first, so that Scrub redacts a value
// containing another one whole.
func SecretsOf(rawURL string, h map[string]string) []string {
	set := map[string]bool{}
	for _, v := range h {
		if v = strings.TrimSpace(v); v != "" {
			set[v] = true
		}
	}
	add := func(v string) {
		if v = strings.TrimSpace(v); len(v) >= minURLSecret {
			set[v] = true
		}
	}
	if u, err := url.Parse(rawURL); err == nil {
		if u.User != nil {
			add(u.User.Username())
			if pw, ok := u.User.Password(); ok {
				add(pw)
			}
			add(u.User.String())
		}
		for _, p := range strings.Split(u.RawQuery, "&") {
			_, v, found := strings.Cut(p, "=")
			if !found {
				v = p
			}
			add(v)
			if d, err := url.QueryUnescape(v); err == nil {
				add(d)
			}
		}
		add(u.RawQuery)
		add(u.Fragment)
		add(u.EscapedFragment())
	}
	out := make([]string, 0, len(set))
	for v := range set {
		out = append(out, v)
	}
	sort.Slice(out, func(i, j int) bool {
		if len(out[i]) != len(out[j]) {
			return len(out[i]) > len(out[j])
		}
		return out[i] < out[j]
	})
	return out
}

// minURLSecret is the shortest URL part SecretsOf treats as a secret, in bytes.
const minURLSecret = 6

// Scrub returns msg with the secrets of the target (rawURL, h) — see SecretsOf — replaced by
// RedactedValue, and every URL in it redacted (ScrubURLs). Use it on any text that may quote
// an upstream's answer or the request (an upstream error message, a JSON-RPC error text)
// before it is stored (last_error, last_health_error), returned or logged.
func Scrub(msg, rawURL string, h map[string]string) string {
	msg = ScrubURLs(msg)
	for _, v := range SecretsOf(rawURL, h) {
		msg = strings.ReplaceAll(msg, v, RedactedValue)
	}
	return msg
}

// CheckURLNotRedacted refuses a URL that carries RedactedValue (as written or
// percent-encoded): a client that sent back a URL it read from a redacted view (the
// connection list, a built-in, an event) would otherwise store "[REDACTED]" as the API key.
// It returns nil or an *apperr.Error with code VALIDATION_ERROR.
func CheckURLNotRedacted(raw string) error {
	decoded, err := url.PathUnescape(raw)
	if err != nil {
		decoded = raw
	}
	if strings.Contains(raw, RedactedValue) || strings.Contains(decoded, RedactedValue) {
		return apperr.New(apperr.Validation, "url contains %s: send the full URL (a redacted view hides query values)", RedactedValue).
			WithHint("read the URL from the connection detail (GET /api/mcp-connections/{id})")
	}
	return nil
}
