package gateway

import (
	"encoding/json"
	"testing"
)

// TestSkillURIRoundTrip: every skill:// URI maps to skill://<handle>/… and back to itself
// (multi-segment paths, query); other schemes and a URI without a handle or path do not.
func TestSkillURIRoundTrip(t *testing.T) {
	t.Parallel()
	for _, uri := range []string{"skill://code-review/SKILL.md", "skill://acme/billing/refunds/templates/email.md", "skill://x/SKILL.md?v=2"} {
		got, ok := skillURI("gh", uri)
		if !ok || got != "skill://gh/"+uri[len("skill://"):] {
			t.Fatalf("skillURI(%q) = %q, %v", uri, got, ok)
		}
		if h, up, ok := skillTarget(got); !ok || h != "gh" || up != uri {
			t.Fatalf("skillTarget(%q) = %q, %q, %v", got, h, up, ok)
		}
	}
	for _, uri := range []string{"ui://d/a", "github://o/r/SKILL.md", "skill://", ""} {
		if got, ok := skillURI("gh", uri); ok {
			t.Errorf("skillURI mapped %q to %q", uri, got)
		}
	}
	for _, uri := range []string{"skill://gh", "skill://gh/", "skill:///x", "memo:x"} {
		if h, up, ok := skillTarget(uri); ok {
			t.Errorf("skillTarget(%q) = %q, %q", uri, h, up)
		}
	}
}

// TestSkillEntry: an entry's uri and resources[].uri are mapped in place; frontmatter,
// digests, spacing and unknown members keep every byte; an entry under another scheme is
// left out.
func TestSkillEntry(t *testing.T) {
	t.Parallel()
	in := `{"uri": "skill://a/SKILL.md", "frontmatter": {"name":"a", "x": [1, 2.50]}, "resources": [ {"uri":"skill://a/SKILL.md","digest":"sha256:00"} , {"uri":"https://x/y","digest":"sha256:11"}], "k": true}`
	want := `{"uri": "skill://gh/a/SKILL.md", "frontmatter": {"name":"a", "x": [1, 2.50]}, "resources": [ {"uri":"skill://gh/a/SKILL.md","digest":"sha256:00"} , {"uri":"https://x/y","digest":"sha256:11"}], "k": true}`
	got, ok := skillEntry(json.RawMessage(in), "gh")
	if !ok || string(got) != want {
		t.Errorf("\n got %s\nwant %s", got, want)
	}
	if _, ok := skillEntry(json.RawMessage(`{"uri":"github://o/r/SKILL.md","frontmatter":{}}`), "gh"); ok {
		t.Error("an entry under another scheme was kept")
	}
}
