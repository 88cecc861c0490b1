package identity

import (
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

var testKey = []byte("0123456789abcdef0123456789abcdef")

func roundTrip(t *testing.T, set, read *Sessions, p Person) (Person, bool, *http.Cookie) {
	t.Helper()
	rec := httptest.NewRecorder()
	if err := set.Set(rec, p); err != nil {
		t.Fatalf("Set: %v", err)
	}
	cs := rec.Result().Cookies()
	if len(cs) != 1 {
		t.Fatalf("Set added %d cookies, want 1", len(cs))
	}
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	r.AddCookie(cs[0])
	got, ok := read.Person(r)
	return got, ok, cs[0]
}

func TestSessionRoundTrip(t *testing.T) {
	for _, secure := range []bool{false, true} {
		s, err := NewSessions(testKey, &SessionOptions{Secure: secure})
		if err != nil {
			t.Fatal(err)
		}
		p := Person{ID: "6b0c7a52-8a8e-4b35-9f57-2a4f3c7e0d11", Issuer: "https://idp.example", Subject: "u1",
			Email: "ada@example.com", Name: "Ada", Groups: []string{"eng"}}
		got, ok, c := roundTrip(t, s, s, p)
		if !ok {
			t.Fatal("a fresh session was not read back")
		}
		want := p
		want.Groups = nil // not carried by the cookie
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("person (-want +got):\n%s", d)
		}
		if !c.HttpOnly || c.SameSite != http.SameSiteLaxMode || c.Path != "/" || c.Secure != secure || c.Domain != "" {
			t.Errorf("cookie attributes %+v", c)
		}
		if wantName := map[bool]string{false: CookieName, true: SecureCookieName}[secure]; c.Name != wantName {
			t.Errorf("cookie name %q, want %q", c.Name, wantName)
		}
		if strings.Contains(c.Value, "ada") || strings.Contains(c.Value, "example") {
			t.Error("the cookie shows its content")
		}
	}
}

func TestSessionRefusals(t *testing.T) {
	now := time.Now()
	clock := func() time.Time { return now }
	s, _ := NewSessions(testKey, &SessionOptions{Now: clock, TTL: time.Hour})
	other, _ := NewSessions([]byte(strings.Repeat("k", 32)), &SessionOptions{Now: clock})
	p := Person{ID: "id", Issuer: "iss", Subject: "sub"}

	t.Run("another key", func(t *testing.T) {
		if _, ok, _ := roundTrip(t, other, s, p); ok {
			t.Error("a cookie sealed with another key was accepted")
		}
	})
	t.Run("expired", func(t *testing.T) {
		rec := httptest.NewRecorder()
		_ = s.Set(rec, p)
		later, _ := NewSessions(testKey, &SessionOptions{Now: func() time.Time { return now.Add(time.Hour) }})
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.AddCookie(rec.Result().Cookies()[0])
		if _, ok := later.Person(r); ok {
			t.Error("an expired session was accepted")
		}
	})
	t.Run("tampered", func(t *testing.T) {
		rec := httptest.NewRecorder()
		_ = s.Set(rec, p)
		c := rec.Result().Cookies()[0]
		b, err := base64.RawURLEncoding.DecodeString(c.Value)
		if err != nil {
			t.Fatal(err)
		}
		b[len(b)/2] ^= 1
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.AddCookie(&http.Cookie{Name: c.Name, Value: base64.RawURLEncoding.EncodeToString(b)})
		if _, ok := s.Person(r); ok {
			t.Error("a tampered cookie was accepted")
		}
	})
	t.Run("renamed", func(t *testing.T) {
		// A cookie sealed for the http name does not open under the https name (aad).
		sec, _ := NewSessions(testKey, &SessionOptions{Secure: true, Now: clock})
		rec := httptest.NewRecorder()
		_ = s.Set(rec, p)
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.AddCookie(&http.Cookie{Name: SecureCookieName, Value: rec.Result().Cookies()[0].Value})
		if _, ok := sec.Person(r); ok {
			t.Error("a cookie moved to another name was accepted")
		}
	})
	for _, v := range []string{"", "x", "!!!", strings.Repeat("A", 5000)} {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.AddCookie(&http.Cookie{Name: CookieName, Value: v})
		if _, ok := s.Person(r); ok {
			t.Errorf("cookie %.10q accepted", v)
		}
	}
	if _, ok := s.Person(httptest.NewRequest(http.MethodGet, "/", nil)); ok {
		t.Error("no cookie, yet a session")
	}
	if err := s.Set(httptest.NewRecorder(), Person{Issuer: "iss", Subject: "sub"}); err == nil {
		t.Error("a person without id got a session")
	}
}

func TestSessionKeyRotation(t *testing.T) {
	oldKey := []byte(strings.Repeat("o", 32))
	old, _ := NewSessions(oldKey, nil)
	cur, err := NewSessions(testKey, &SessionOptions{OldKeys: [][]byte{oldKey}})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := roundTrip(t, old, cur, Person{ID: "i", Issuer: "s", Subject: "u"}); !ok {
		t.Error("a cookie sealed with an old key was refused")
	}
	if _, err := NewSessions([]byte("short"), nil); err != ErrSessionKey {
		t.Errorf("short key: %v", err)
	}
	if _, err := NewSessions(testKey, &SessionOptions{OldKeys: [][]byte{[]byte("short")}}); err != ErrSessionKey {
		t.Errorf("short old key: %v", err)
	}
}

func TestSessionClear(t *testing.T) {
	s, _ := NewSessions(testKey, nil)
	rec := httptest.NewRecorder()
	s.Clear(rec)
	c := rec.Result().Cookies()
	if len(c) != 1 || c[0].Name != CookieName || c[0].MaxAge >= 0 {
		t.Fatalf("Clear set %+v", c)
	}
}

func TestSafeReturnTo(t *testing.T) {
	for _, tc := range []struct {
		in string
		ok bool
	}{
		{"/admin/", true},
		{"/admin/#/members?ws=1", true},
		{"/oauth/consent?link=abc", true},
		{"", false},
		{"admin", false},
		{"//evil.example/", false},
		{"/\\evil.example", false},
		{"\\\\evil.example", false},
		{"https://evil.example/", false},
		{"javascript:alert(1)", false},
		{"/%2F%2Fevil.example", false},
		{"/a b", false},
		{"/a\tb", false},
		{"/a\nb", false},
		{"/" + strings.Repeat("a", 3000), false},
	} {
		got, ok := SafeReturnTo(tc.in)
		if ok != tc.ok || (ok && got != tc.in) {
			t.Errorf("SafeReturnTo(%q) = %q, %v; want ok=%v", tc.in, got, ok, tc.ok)
		}
	}
}

func TestSignInURL(t *testing.T) {
	for in, want := range map[string]string{
		"/admin/#/members":     "/admin/#/members",
		"https://evil.example": DefaultReturnTo,
		"//evil.example":       DefaultReturnTo,
		"":                     DefaultReturnTo,
	} {
		u, err := url.Parse(SignInURL(in))
		if err != nil || u.Path != SignInPath || u.Host != "" || u.Query().Get("return_to") != want {
			t.Errorf("SignInURL(%q) = %q, want return_to %q", in, SignInURL(in), want)
		}
	}
}
