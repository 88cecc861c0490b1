package apps

import (
	"net/url"
	"strings"
)

// Extension is the MCP Apps extension's identifier (capabilities.extensions key).
const Extension = "io.modelcontextprotocol/ui"

// MIMEType is the MIME type of an MCP App view (SEP-1865 "UI Resource Format").
const MIMEType = "text/html;profile=mcp-app"

const scheme = "ui://"

// rest returns what follows the ui:// scheme of uri (the scheme matched without regard
// to case, RFC 3986 §3.1); ok is false for any other URI.
func rest(uri string) (string, bool) {
	if len(uri) < len(scheme) || !strings.EqualFold(uri[:len(scheme)], scheme) {
		return "", false
	}
	return uri[len(scheme):], true
}

// URI is the aggregate endpoint's name of connection handle's upstream view URI uri:
// ui://<handle>/<what followed ui://> for a ui:// URI, and ui://<handle>/:<uri> for an
// opaque URI (RFC 3986 §3: a scheme and no authority, such as memo:board-1 or
// urn:x:view — issue 34: views an upstream serves under such URIs were not listed). The
// ":" form cannot collide with a ui:// one: after ui://<handle>/ a ui:// URI's authority
// follows, which starts with ":" only before a port (digits), while a scheme starts with a
// letter. ok is false for any other URI (https://…, file:///…, malformed).
func URI(handle, uri string) (string, bool) {
	if r, ok := rest(uri); ok {
		return scheme + handle + "/" + r, true
	}
	if opaque(uri) {
		return scheme + handle + "/:" + uri, true
	}
	return "", false
}

// opaque reports whether uri is an absolute URI without an authority or a rooted path
// (RFC 3986 §3, "path-rootless"; net/url's Opaque): scheme ":" then anything but "/".
func opaque(uri string) bool {
	u, err := url.Parse(uri)
	return err == nil && u.Scheme != "" && u.Opaque != "" && !strings.EqualFold(u.Scheme, "ui")
}

// Target reverses URI: the handle and the upstream's own URI of an aggregate ui:// URI;
// ok is false when uri is not of that form (no ui:// scheme, no "/" after a non-empty
// handle, a ":" form that is no opaque URI).
func Target(uri string) (handle, upstream string, ok bool) {
	r, ok := rest(uri)
	if !ok {
		return "", "", false
	}
	handle, orig, found := strings.Cut(r, "/")
	if !found || handle == "" {
		return "", "", false
	}
	if len(orig) > 1 && orig[0] == ':' && isLetter(orig[1]) {
		if !opaque(orig[1:]) {
			return "", "", false
		}
		return handle, orig[1:], true
	}
	return handle, scheme + orig, true
}

func isLetter(b byte) bool { return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' }

// viewURI reports whether uri can name an MCP App view the aggregate endpoint maps: a
// ui:// URI or an opaque one (URI).
func viewURI(uri string) bool {
	_, ok := rest(uri)
	return ok || opaque(uri)
}

// isAppMIME reports whether mime is an MCP App view's type (text/html;profile=mcp-app,
// case and spaces around ";" ignored).
func isAppMIME(mime string) bool {
	return strings.EqualFold(strings.ReplaceAll(mime, " ", ""), MIMEType)
}
