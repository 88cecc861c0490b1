package stack_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/agentpack/gateway/shared/testpeer"
)

// terminal is a command run in a pseudo-terminal, as a person runs an interactive CLI: the
// clients whose sign-in only runs in a terminal (the Inspector CLI's OAuth prompts, Claude
// Code's `mcp login`, gemini-cli's `/mcp auth`) are driven through it. The terminal is very
// wide so that no URL wraps.
type terminal struct {
	t    *testing.T
	cmd  *exec.Cmd
	tty  *os.File
	mu   sync.Mutex
	raw  bytes.Buffer
	done chan struct{}
	err  error // the command's exit, after done
	// drained is closed when the reader has read the pseudo-terminal to its end (EIO once
	// the command and its children have exited): what text shows is then complete.
	drained chan struct{}
}

// escapes matches terminal control sequences: CSI (colours, cursor moves), OSC (titles,
// hyperlinks: the link's text stays) and the lone two-byte ones.
var escapes = regexp.MustCompile(`\x1b\[[0-9;?<>=]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[()][0-9A-Za-z]|\x1b[=>78c]`)

// startTerminal starts name args in dir with env (added to a minimal environment: PATH and
// the given HOME-like variables only, so nothing of this machine's user leaks in), in a
// pseudo-terminal of 4000×60. The process group is killed when the test ends.
func startTerminal(t *testing.T, dir string, env []string, name string, args ...string) *terminal {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "TERM=xterm-256color", "LANG=C.UTF-8"}, env...)
	tty, err := pty.StartWithSize(cmd, &pty.Winsize{Cols: 4000, Rows: 60})
	if err != nil {
		t.Fatalf("start %s in a pseudo-terminal: %v", name, err)
	}
	term := &terminal{t: t, cmd: cmd, tty: tty, done: make(chan struct{}), drained: make(chan struct{})}
	go func() {
		defer close(term.drained)
		buf := make([]byte, 32<<10)
		for {
			n, err := tty.Read(buf)
			term.mu.Lock()
			term.raw.Write(buf[:n])
			term.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	go func() {
		term.err = cmd.Wait()
		close(term.done)
	}()
	t.Cleanup(func() {
		if d := os.Getenv("PTY_DUMP"); d != "" { // debugging a client's screen
			_ = os.WriteFile(filepath.Join(d, strings.ReplaceAll(t.Name(), "/", "_")+"-"+filepath.Base(name)+"-"+strconv.Itoa(cmd.Process.Pid)+".txt"), []byte(term.text()), 0o644)
		}
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Process.Kill()
		<-term.done
		_ = tty.Close()
	})
	return term
}

// text is everything shown so far, control sequences removed.
func (term *terminal) text() string {
	term.mu.Lock()
	defer term.mu.Unlock()
	return escapes.ReplaceAllString(term.raw.String(), "")
}

// waitFor waits until the shown text matches re (or the process ends, or the scaled timeout
// passes: the test fails with the text) and returns the first match's submatches.
func (term *terminal) waitFor(re *regexp.Regexp, timeout time.Duration) []string {
	term.t.Helper()
	deadline := time.Now().Add(testpeer.Scaled(timeout))
	for {
		if m := re.FindStringSubmatch(term.text()); m != nil {
			return m
		}
		select {
		case <-term.done:
			if m := re.FindStringSubmatch(term.text()); m != nil {
				return m
			}
			term.t.Fatalf("%s ended (%v) before showing %q:\n%s", term.cmd.Path, term.err, re, term.tail())
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			term.t.Fatalf("%s never showed %q:\n%s", term.cmd.Path, re, term.tail())
		}
	}
}

// tail is the end of the shown text with runs of blanks squeezed, for failure messages.
func (term *terminal) tail() string {
	s := regexp.MustCompile(`[ \t]{2,}`).ReplaceAllString(term.text(), " ")
	return s[max(0, len(s)-6000):]
}

// typeKeys writes s to the terminal as typed keys ("\r" is Enter).
func (term *terminal) typeKeys(s string) {
	term.t.Helper()
	if _, err := io.WriteString(term.tty, s); err != nil {
		term.t.Fatalf("type into %s: %v", term.cmd.Path, err)
	}
}

// submit types line into an interactive prompt and presses Enter until the shown text
// matches started (a terminal UI that takes a fast burst of keys as a paste keeps an Enter
// that comes with it as text, so Enter goes alone, a moment later, and again if needed).
func (term *terminal) submit(line string, started *regexp.Regexp) {
	term.t.Helper()
	typed := term.size()
	term.typeKeys(line)
	for range 5 {
		// A terminal UI can draw its prompt before it reads its input (seen once from a
		// fresh clone: the line never showed, and five Enters met an empty prompt). When
		// nothing at all was drawn in the few seconds after the line was typed, it was not
		// read: type it again. (Anything drawn counts as read, so a line is never typed
		// twice into a prompt that took it.)
		if !term.drawsSince(typed, testpeer.Scaled(5*time.Second)) {
			typed = term.size()
			term.typeKeys(line)
		}
		time.Sleep(time.Second)
		term.typeKeys("\r")
		deadline := time.Now().Add(testpeer.Scaled(5 * time.Second))
		for time.Now().Before(deadline) {
			if started.MatchString(term.text()) {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	term.t.Fatalf("%s did not take %q:\n%s", term.cmd.Path, line, term.tail())
}

// size is how many bytes the terminal has shown so far.
func (term *terminal) size() int {
	term.mu.Lock()
	defer term.mu.Unlock()
	return term.raw.Len()
}

// drawsSince reports whether the terminal shows more than n bytes within d.
func (term *terminal) drawsSince(n int, d time.Duration) bool {
	for deadline := time.Now().Add(d); ; time.Sleep(100 * time.Millisecond) {
		if term.size() > n {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
	}
}

// wait waits for the process to end and returns its exit error (nil: exit 0).
func (term *terminal) wait(timeout time.Duration) error {
	term.t.Helper()
	select {
	case <-term.done:
		// The exit can be seen before the reader has taken the command's last output (a
		// loaded machine showed an empty `claude mcp get`): wait for it, a bounded time
		// (a child still holding the terminal would keep it open).
		select {
		case <-term.drained:
		case <-time.After(testpeer.Scaled(5 * time.Second)):
		}
		return term.err
	case <-time.After(testpeer.Scaled(timeout)):
		term.t.Fatalf("%s did not end:\n%s", term.cmd.Path, term.tail())
		return nil
	}
}

// authorizeURLIn matches an authorization request to the gateway in a client's output.
var authorizeURLIn = regexp.MustCompile(`(https?://[^\s"'<>]+/oauth/authorize\?[^\s"'<>]+)`)

// allowInBrowser is the member's browser step for a client with a loopback callback server:
// person's browser opens authURL, allows on the consent page, and follows the redirect to
// the client's redirect URI, where the client's own callback server takes the code. It
// returns that redirect (code, state, iss).
func (w *asWorld) allowInBrowser(t *testing.T, person, authURL string) *url.URL {
	t.Helper()
	u, err := url.Parse(authURL)
	if err != nil {
		t.Fatal(err)
	}
	back := w.consentRedirect(t, w.browser(t, person), authURL, u.Query().Get("redirect_uri"))
	ctx, cancel := context.WithTimeout(t.Context(), testpeer.Scaled(20*time.Second))
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, back.String(), nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("the browser could not reach the client's callback %s: %v", back, err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return back
}

// npmBin returns the path of an installed npm package's file under test/npm/node_modules,
// skipping the test when it is missing (or failing under REQUIRE_PEERS=1).
func npmBin(t *testing.T, rel string) string {
	t.Helper()
	p := filepath.Join(testpeer.NPMDir(t), "node_modules", rel)
	if _, err := os.Stat(p); err != nil {
		if os.Getenv(testpeer.RequirePeersEnv) == "1" {
			t.Fatalf("%s is not installed in test/npm: run `make npm-deps`", p)
		}
		t.Skipf("%s is not installed in test/npm (make npm-deps); skipping", p)
	}
	return p
}
