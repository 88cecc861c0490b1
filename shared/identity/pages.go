package identity

import (
	"fmt"
	"html"
	"net/http"
	"net/url"
	"strings"
)

// The small HTML pages of the sign-in routes (a refusal, the no-membership page), written
// with html.EscapeString (pageHead says why not html/template).

// pageHead and the page's parts are written with html.EscapeString, not html/template:
// executing a template keeps every exported method of every type in the binary (the
// linker cannot prune methods a template might call by name), which made the marketplace
// function 8.7 MB larger (GOOS=linux GOARCH=arm64 go build -trimpath -ldflags="-s -w": 30.1 MB
// with html/template, 21.9 MB without; 21.4 MB before the sign-in).
const pageHead = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
<title>%s · Agentpack</title>
<style>body{font:16px system-ui,sans-serif;max-width:36rem;margin:4rem auto;padding:0 1rem;color:#1f2328}
h1{font-size:1.4rem}a,button{font:inherit}</style></head>
<body><h1>%s</h1><p id="message">%s</p>
`

// page writes a small HTML page with status, title and message (escaped).
func page(w http.ResponseWriter, status int, title, message string) {
	writePage(w, status, map[string]string{"Title": title, "Message": message, "SignIn": SignInURL(DefaultReturnTo)})
}

func writePage(w http.ResponseWriter, status int, data map[string]string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	e := html.EscapeString
	fmt.Fprintf(w, pageHead, e(data["Title"]), e(data["Title"]), e(data["Message"]))
	if data["Who"] != "" {
		fmt.Fprintf(w, "<p>Signed in as <strong id=\"who\">%s</strong>.</p>\n", e(data["Who"]))
	}
	if data["SignOut"] != "" {
		fmt.Fprintf(w, "<form method=\"post\" action=\"%s\"><button type=\"submit\">Sign out</button></form>\n", e(data["SignOut"]))
	} else {
		fmt.Fprintf(w, "<p><a href=\"%s\">Sign in again</a></p>\n", e(data["SignIn"]))
	}
	fmt.Fprint(w, "</body></html>\n")
}

// NoMembershipHandler serves NoMembershipPath: for a signed-in person, a 403 page that says
// they are signed in (name and email) but a member of no workspace, whom to ask, and a
// sign-out button; without a session, a 401 page with the sign-in link.
func NoMembershipHandler(sessions *Sessions) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, ok := sessions.Person(r)
		if !ok {
			writePage(w, http.StatusUnauthorized, map[string]string{"Title": "Not signed in",
				"Message": "Sign in with your organisation's account.", "SignIn": SignInURL(DefaultReturnTo)})
			return
		}
		who := p.Email
		if p.Name != "" {
			who = p.Name + " (" + p.Email + ")"
		}
		writePage(w, http.StatusForbidden, map[string]string{"Title": "No workspace yet",
			"Message": "You are not a member of any workspace yet. Ask an admin of your workspace to add you " +
				"(by this email) on the console's Members page, then sign in again.",
			"Who": strings.TrimSuffix(who, " ()"), "SignOut": SignOutPath + "?return_to=" + url.QueryEscape(SignInURL(DefaultReturnTo))})
	})
}
