package names

import (
	"strings"
	"testing"
)

func TestExposed(t *testing.T) {
	long := strings.Repeat("x", 80)
	tests := []struct {
		name, handle, upstream, want string
	}{
		{"plain", "deepwiki", "read_wiki", "mcp_deepwiki_read_wiki"},
		{"dash kept", "gh", "get-issue", "mcp_gh_get-issue"},
		{"dot replaced and hashed", "gh", "repo.get", "mcp_gh_repo_get_" + hash8("repo.get")},
		{"unicode replaced", "gh", "héllo", "mcp_gh_h__llo_" + hash8("héllo")},
		{"empty tool", "gh", "", "mcp_gh__" + hash8("")},
		{"too long shortened", "gh", long, "mcp_gh_" + long[:64-len("mcp_gh_")-9] + "_" + hash8(long)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Exposed(tt.handle, tt.upstream)
			if got != tt.want {
				t.Errorf("Exposed(%q, %q) = %q, want %q", tt.handle, tt.upstream, got, tt.want)
			}
			if !Valid(got) {
				t.Errorf("Exposed(%q, %q) = %q is not a valid name", tt.handle, tt.upstream, got)
			}
		})
	}
}

func TestExposedNoCollisionAfterSanitizing(t *testing.T) {
	a, b := Exposed("h", "a.b"), Exposed("h", "a_b")
	if a == b {
		t.Fatalf("a.b and a_b both exposed as %q", a)
	}
}

func TestExposedLongNamesDistinct(t *testing.T) {
	p := strings.Repeat("y", 70)
	a, b := Exposed("h", p+"1"), Exposed("h", p+"2")
	if a == b || len(a) != MaxLen || len(b) != MaxLen {
		t.Fatalf("long names: %q and %q", a, b)
	}
}

func FuzzExposed(f *testing.F) {
	for _, s := range []string{"echo", "a.b", "", strings.Repeat("z", 100), "ünï", "a b/c"} {
		f.Add("handle16chars123", s)
	}
	f.Fuzz(func(t *testing.T, handle, upstream string) {
		h := strings.Map(func(r rune) rune {
			if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
				return r
			}
			return -1
		}, handle)
		if h == "" || len(h) > 16 {
			return
		}
		got := Exposed(h, upstream)
		if !Valid(got) {
			t.Fatalf("Exposed(%q, %q) = %q: invalid", h, upstream, got)
		}
		if !strings.HasPrefix(got, Prefix(h)) {
			t.Fatalf("Exposed(%q, %q) = %q: lost its prefix", h, upstream, got)
		}
		if got != Exposed(h, upstream) {
			t.Fatalf("not deterministic")
		}
		// A different upstream name never maps to the same exposed name unless both are
		// already clean and equal.
		other := upstream + "."
		if Exposed(h, other) == got {
			t.Fatalf("collision between %q and %q", upstream, other)
		}
	})
}
