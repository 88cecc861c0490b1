package identity

import (
	"encoding/json"
	"net/http"

	"github.com/agentpack/gateway/shared/apperr"
)

// The session's JSON route (SessionPath) and the session routes of a gateway without an
// identity provider (SessionRoutes).

// SessionView is the JSON of SessionPath.
type SessionView struct {
	Person      PersonView       `json:"person"`
	Superuser   bool             `json:"superuser"`
	Memberships []MembershipView `json:"memberships"`
}

// PersonView is a person as the API shows it (no issuer subject secrets: both are ids).
type PersonView struct {
	ID      string `json:"id"`
	Issuer  string `json:"issuer"`
	Subject string `json:"subject"`
	Email   string `json:"email"`
	Name    string `json:"name"`
}

// MembershipView is one membership as JSON.
type MembershipView struct {
	WorkspaceID string `json:"workspaceId"`
	Role        string `json:"role"`
}

// SessionHandler serves SessionPath: 200 with a SessionView of the browser's session
// (memberships read from Postgres now), 401 {"error":"not signed in"} without one, 503 when
// the database fails.
func SessionHandler(sessions *Sessions, people *Service) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		p, ok := sessions.Person(r)
		if !ok {
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"error":"not signed in","signIn":` + jsonString(SignInURL(DefaultReturnTo)) + `}`))
			return
		}
		row, err := people.Person(r.Context(), p.ID)
		if apperr.CodeOf(err) == apperr.NotFound { // the person was deleted since
			sessions.Clear(w)
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"error":"not signed in","signIn":` + jsonString(SignInURL(DefaultReturnTo)) + `}`))
			return
		}
		var ms []Membership
		if err == nil {
			ms, err = people.Memberships(r.Context(), p.ID)
		}
		if err != nil {
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = w.Write([]byte(`{"error":"the memberships cannot be read now"}`))
			return
		}
		v := SessionView{Person: PersonView{ID: p.ID, Issuer: p.Issuer, Subject: p.Subject, Email: p.Email, Name: p.Name},
			Superuser: row.Superuser, Memberships: []MembershipView{}}
		for _, m := range ms {
			v.Memberships = append(v.Memberships, MembershipView(m))
		}
		_ = json.NewEncoder(w).Encode(v)
	})
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// SessionRoutes serves the session's routes where no identity provider is configured
// (`make run` with only the development sign-in, tests): SessionPath, NoMembershipPath and
// SignOutPath as SignIn.Handler does, and SignInPath and CallbackPath as a 404 page saying
// that no identity provider is configured.
func SessionRoutes(sessions *Sessions, people *Service) http.Handler {
	mux := http.NewServeMux()
	none := func(w http.ResponseWriter, r *http.Request) {
		page(w, http.StatusNotFound, "No identity provider", "This gateway has no identity provider configured (IDP_ISSUER).")
	}
	mux.HandleFunc("GET "+SignInPath, none)
	mux.HandleFunc("GET "+CallbackPath, none)
	out := func(w http.ResponseWriter, r *http.Request) {
		sessions.Clear(w)
		rt, ok := SafeReturnTo(r.URL.Query().Get("return_to"))
		if !ok {
			rt = "/"
		}
		http.Redirect(w, r, rt, http.StatusSeeOther)
	}
	mux.HandleFunc("GET "+SignOutPath, out)
	mux.HandleFunc("POST "+SignOutPath, out)
	mux.Handle("GET "+SessionPath, SessionHandler(sessions, people))
	mux.Handle("GET "+NoMembershipPath, NoMembershipHandler(sessions))
	return noStore(mux)
}
