package names

import "testing"

func TestConnectionHandleBase(t *testing.T) {
	tests := []struct{ name, entry, want string }{
		{"lower-cased, space dropped", "GitHub Copilot", "githubcopilo"},
		{"digits kept", "S3 Files 2", "s3files2"},
		{"punctuation dropped", "deep-wiki.io", "deepwikiio"},
		{"non-ASCII letters dropped", "Ñandú maps", "andmaps"},
		{"exactly 12 kept", "abcdefghijkl", "abcdefghijkl"},
		{"cut at 12", "abcdefghijklmnop", "abcdefghijkl"},
		{"nothing left", "Ñ ü!", "conn"},
		{"empty", "", "conn"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ConnectionHandleBase(tt.entry); got != tt.want {
				t.Errorf("ConnectionHandleBase(%q) = %q, want %q", tt.entry, got, tt.want)
			}
		})
	}
}

func TestConnectionHandleCandidate(t *testing.T) {
	tests := []struct {
		base    string
		attempt int
		want    string
	}{
		{"github", 0, "github"},
		{"github", 1, "github2"},
		{"github", 8, "github9"},
		{"abcdefghijkl", 49, "abcdefghijkl50"},
	}
	for _, tt := range tests {
		got := ConnectionHandleCandidate(tt.base, tt.attempt)
		if got != tt.want {
			t.Errorf("ConnectionHandleCandidate(%q, %d) = %q, want %q", tt.base, tt.attempt, got, tt.want)
		}
		if len(got) > 16 {
			t.Errorf("ConnectionHandleCandidate(%q, %d) = %q: longer than 16", tt.base, tt.attempt, got)
		}
	}
}
