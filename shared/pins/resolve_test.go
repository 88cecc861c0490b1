package pins

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func sp(s string) *string { return &s }

// The world of the table: workspace "ws" with two workspace-scoped connections (one
// disabled), one project-scoped; two global connections (one disabled); and one
// connection of workspace "other".
var (
	wsA      = Conn{ID: "ws-a", Enabled: true, WorkspaceID: sp("ws")}
	wsOff    = Conn{ID: "ws-off", Enabled: false, WorkspaceID: sp("ws")}
	proj     = Conn{ID: "proj", Enabled: true, WorkspaceID: sp("ws"), ProjectID: sp("p1")}
	glob     = Conn{ID: "glob", Enabled: true}
	globOff  = Conn{ID: "glob-off", Enabled: false}
	other    = Conn{ID: "other", Enabled: true, WorkspaceID: sp("other-ws")}
	wsB      = Conn{ID: "ws-b", Enabled: true, WorkspaceID: sp("ws")}
	allConns = []Conn{wsA, wsOff, proj, glob, globOff, other, wsB}
)

func keys(m map[string]bool) []string {
	var out []string
	for k, v := range m {
		if v {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// TestResolve covers every branch of the seed's resolveSkillsForChat (docs/DESIGN.md §7).
func TestResolve(t *testing.T) {
	t.Parallel()
	// available is what the gateway passes: the enabled connections visible in ws.
	available := []Conn{wsA, proj, glob, wsB}
	tests := []struct {
		name      string
		available []Conn
		pinned    []Conn
		allowed   []string
		pins      []string
		fellBack  bool
	}{
		{name: "no pins: every enabled connection of the workspace scope, globals included, project-scoped excluded",
			available: available, allowed: []string{"glob", "ws-a", "ws-b"}},
		{name: "no pins and disabled rows in the input: disabled ones never count",
			available: allConns, allowed: []string{"glob", "ws-a", "ws-b"}},
		{name: "no pins, empty workspace", allowed: nil},
		{name: "pin to a workspace connection: pins only add, workspace-scoped stay",
			available: available, pinned: []Conn{wsA}, allowed: []string{"ws-a", "ws-b"}, pins: []string{"ws-a"}},
		{name: "pin to a global connection: global added on top of the workspace-scoped ones",
			available: available, pinned: []Conn{glob}, allowed: []string{"glob", "ws-a", "ws-b"}, pins: []string{"glob"}},
		{name: "pins present: an unpinned global is not included",
			available: []Conn{wsA, glob, {ID: "glob2", Enabled: true}}, pinned: []Conn{glob},
			allowed: []string{"glob", "ws-a"}, pins: []string{"glob"}},
		{name: "pin to a project-scoped connection is excluded, the usable pin stays",
			available: available, pinned: []Conn{proj, glob}, allowed: []string{"glob", "ws-a", "ws-b"}, pins: []string{"glob"}},
		{name: "pin to a disabled connection is excluded, the usable pin stays",
			available: available, pinned: []Conn{wsOff, glob}, allowed: []string{"glob", "ws-a", "ws-b"}, pins: []string{"glob"}},
		{name: "pin to another workspace's connection is excluded",
			available: available, pinned: []Conn{other, glob}, allowed: []string{"glob", "ws-a", "ws-b"}, pins: []string{"glob"}},
		{name: "all pins unusable (disabled, project, other workspace, disabled global): fall back to the workspace default",
			available: available, pinned: []Conn{wsOff, proj, other, globOff},
			allowed: []string{"glob", "ws-a", "ws-b"}, fellBack: true},
		{name: "single disabled pin: fall back",
			available: available, pinned: []Conn{globOff}, allowed: []string{"glob", "ws-a", "ws-b"}, fellBack: true},
		{name: "workspace-scoped connections only active ones: a disabled one in the input is not added",
			available: []Conn{wsA, wsOff, glob}, pinned: []Conn{glob}, allowed: []string{"glob", "ws-a"}, pins: []string{"glob"}},
		{name: "a project-scoped available connection is never added by the union",
			available: []Conn{proj, glob}, pinned: []Conn{glob}, allowed: []string{"glob"}, pins: []string{"glob"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := Resolve("ws", tc.available, tc.pinned)
			if d := cmp.Diff(tc.allowed, keys(got.Allowed)); d != "" {
				t.Errorf("Allowed (-want +got):\n%s", d)
			}
			if d := cmp.Diff(tc.pins, got.Pinned); d != "" {
				t.Errorf("Pinned (-want +got):\n%s", d)
			}
			if got.FellBack != tc.fellBack {
				t.Errorf("FellBack = %v, want %v", got.FellBack, tc.fellBack)
			}
		})
	}
}

func TestInScope(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		c    Conn
		want bool
	}{{wsA, true}, {glob, true}, {proj, false}, {other, false}, {wsOff, true}} {
		if got := inScope("ws", tc.c); got != tc.want {
			t.Errorf("inScope(%s) = %v, want %v", tc.c.ID, got, tc.want)
		}
	}
}
