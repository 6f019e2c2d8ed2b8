package acceptance

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/idemctl/idemctl/internal/clitest"
	"github.com/idemctl/idemctl/internal/recordtest"
)

// tmuxSession drives the real binary in a real terminal (tmux), as an
// operator would: send keys, read the screen.
type tmuxSession struct {
	t      *testing.T
	socket string
	name   string
}

func newTmux(t *testing.T, w, h int, command string) *tmuxSession {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Fatal("tmux not found in PATH: the end-to-end test needs it; install it with `apt-get install -y tmux` or run `bash .ci/run`")
	}
	s := &tmuxSession{t: t, socket: "idemctl-e2e-" + strconv.Itoa(os.Getpid()), name: "e2e" + strconv.Itoa(w)}
	s.tmux("new-session", "-d", "-s", s.name, "-x", strconv.Itoa(w), "-y", strconv.Itoa(h), command)
	t.Cleanup(func() { exec.Command("tmux", "-L", s.socket, "kill-session", "-t", s.name).Run() })
	return s
}

func (s *tmuxSession) tmux(args ...string) string {
	s.t.Helper()
	out, err := exec.Command("tmux", append([]string{"-L", s.socket}, args...)...).CombinedOutput()
	if err != nil {
		s.t.Fatalf("tmux %v: %v\n%s", args, err, out)
	}
	return string(out)
}

func (s *tmuxSession) screen() string { return s.tmux("capture-pane", "-p", "-t", s.name) }

func (s *tmuxSession) send(keys ...string) {
	s.tmux(append([]string{"send-keys", "-t", s.name}, keys...)...)
}

// waitFor polls the screen until every want is on it.
func (s *tmuxSession) waitFor(what string, want ...string) string {
	s.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		scr := s.screen()
		flat := strings.Join(strings.Fields(scr), " ")
		ok := true
		for _, w := range want {
			if !strings.Contains(flat, w) {
				ok = false
			}
		}
		if ok {
			return scr
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("%s: screen never showed %q:\n%s", what, want, scr)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// The "done when", end to end: the demo shows live data; from the
// keyboard the operator filters to stale records, opens one and reads why it
// is stale and how its age was derived; the terminal is restored on quit.
func TestDemoEndToEndInTmux(t *testing.T) {
	bin := clitest.BuildBinary(t)
	for _, size := range [][2]int{{80, 24}, {200, 50}} {
		s := newTmux(t, size[0], size[1], bin+" demo; echo EXITED:$?; sleep 60")
		scr := s.waitFor("first screen", "WRITES ENABLED", "records in", "STATE", "processing", "stale") // stale first: the default order
		lines := strings.Split(strings.TrimRight(scr, "\n"), "\n")
		if len(lines) > size[1] {
			t.Fatalf("%dx%d: %d lines on screen", size[0], size[1], len(lines))
		}
		s.send("x")
		s.waitFor("stale filter", "filter: stale", "processing") // the table names flags in lower case (stale, stuck)
		s.send("Enter")
		s.waitFor("detail", "STALE?", "yes: processing for", "longer than the processing timeout", "from the TTL", "reserve TTL 2m00s")
		s.send("Escape")
		s.waitFor("back to records", "filter: stale", "KEY (atlasmart")
		s.send("?")
		s.waitFor("help", "Keys", "any key closes")
		s.send("j")
		s.send("Tab")
		s.waitFor("stats", "STATES", "PROCESSING AGE")
		s.send("q")
		scr = s.waitFor("quit", "EXITED:0")
		if strings.Contains(scr, "WRITES ENABLED") {
			t.Fatalf("alternate screen not left on quit:\n%s", scr)
		}
	}
}

// The actions issue's "done when", end to end in the demo: filter stale
// records, mark several, force-fail them through the confirmation, and see
// the outcome in the writes screen and the audit log.
func TestDemoForceFailInTmux(t *testing.T) {
	bin := clitest.BuildBinary(t)
	audit := recordtest.AuditPath(t)
	s := newTmux(t, 100, 30, bin+" demo --audit-log "+audit+"; echo EXITED:$?; sleep 60")
	s.waitFor("first screen", "WRITES ENABLED", "records in")
	s.send("x")
	s.waitFor("stale filter", "filter: stale", "processing") // the table names flags in lower case (stale, stuck)
	s.send("Space")
	s.send("Space")
	s.waitFor("marks", "2 marked")
	s.send("F")
	s.waitFor("dialog", "FAIL 2 record(s)", "Reason")
	s.send("-l", "worker crashed; order not in the orders DB")
	s.send("Enter")
	s.send("Enter")
	s.waitFor("confirmation", "PROCESSING → FAILED", "Type 2 and enter")
	s.send("2")
	s.send("Enter")
	s.waitFor("outcome", "2 applied")
	s.send("Enter")
	s.send("Tab")
	s.send("Tab")
	s.waitFor("writes screen", "WRITES THIS SESSION", "fail", "applied")
	s.send("q")
	s.waitFor("quit", "EXITED:0")
	data, err := os.ReadFile(audit)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(data), `"phase":"outcome"`); n != 2 || strings.Count(string(data), `"outcome":"applied"`) != 2 {
		t.Fatalf("audit log: %d outcomes\n%s", n, data)
	}
}
