package acceptance

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/idemctl/idemctl/internal/testkit/clitest"
	"github.com/idemctl/idemctl/internal/testkit/recordtest"
	"github.com/idemctl/idemctl/internal/testkit/redistest"
)

// tmuxSession drives the real binary in a real terminal (tmux), as an
// operator would: send keys, read the screen.
type tmuxSession struct {
	t      *testing.T
	socket string
	name   string
	env    []string // the whole environment of tmux and of the command it runs
}

// tmuxTerm is the terminal tmux emulates (its own default-terminal), the
// TERM every command a session runs sees.
const tmuxTerm = "tmux-256color"

func newTmux(t *testing.T, w, h int, command string) *tmuxSession {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Fatal("tmux not found in PATH: the end-to-end test needs it; install it with `apt-get install -y tmux` or run `bash .ci/test`")
	}
	s := &tmuxSession{t: t, socket: "idemctl-e2e-" + strconv.Itoa(os.Getpid()), name: "e2e" + strconv.Itoa(w),
		env: clitest.Environ(t, "TERM="+tmuxTerm)}
	// The command runs under exactly s.env, not the environment tmux hands
	// its panes (its server's, its config's set-environment).
	s.tmux("new-session", "-d", "-s", s.name, "-x", strconv.Itoa(w), "-y", strconv.Itoa(h), clitest.ShellLine(s.env, command))
	t.Cleanup(func() { s.command("kill-session", "-t", s.name).Run() })
	return s
}

// command is one tmux client call on the session's private server, which
// reads no config file (-f /dev/null: not the user's ~/.tmux.conf) and is
// started, by the first call, with the session's environment.
func (s *tmuxSession) command(args ...string) *exec.Cmd {
	cmd := exec.Command("tmux", append([]string{"-f", "/dev/null", "-L", s.socket}, args...)...)
	cmd.Env = s.env
	return cmd
}

func (s *tmuxSession) tmux(args ...string) string {
	s.t.Helper()
	out, err := s.command(args...).CombinedOutput()
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

// The TUI issue's bugs end to end at 80×24, each against the real binary
// in tmux. They use only the tmux helpers and the built binary (seed
// included), so the file moves with the end-to-end suite unchanged.

// slowUI seeds n records on the shared server and returns the command line
// of a UI whose scan is throttled, so a scan lasts long enough to act on.
func slowUI(t *testing.T, bin string, n int, extra string) string {
	t.Helper()
	url := redistest.Shared(t).URL(0)
	timing := " --reserve-ttl 1h --processing-timeout 10m"
	out, err := clitest.Command(t, bin, append([]string{"seed", "--url", url, "--count", strconv.Itoa(n)}, strings.Fields(timing)...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("seed: %v\n%s", err, out)
	}
	return bin + " ui --url " + url + " --preset atlasmart --match 'atlasmart:ch23:idem:*'" + timing +
		" --keys-per-sec 1000 " + extra + "; echo EXITED:$?; sleep 60"
}

// Bug 1: a filter set while a background refresh runs survives the refresh.
func TestTUIRefreshKeepsFilterInTmux(t *testing.T) {
	bin := clitest.BuildBinary(t)
	s := newTmux(t, 80, 24, slowUI(t, bin, 4000, "--refresh 1s --follow=false")) // passes, not following
	s.waitFor("first scan", "✓ 4,000 records")
	s.waitFor("refresh running", "(refresh")
	s.send("x")
	s.waitFor("stale filter during the refresh", "filter: stale", "(refresh")
	scr := s.waitFor("refresh done", "✓ 4,000 records")
	if !strings.Contains(scr, "filter: stale") || strings.Contains(scr, "4,000 of 4,000") {
		t.Fatalf("the refresh dropped the filter set while it ran:\n%s", scr)
	}
	s.send("q")
	s.waitFor("quit", "EXITED:0")
}

// Bug 2: esc in the filter input leaves the first scan running; esc on the
// table stops it, and the screens say the counts are partial.
func TestTUICancelledScanIsPartialInTmux(t *testing.T) {
	bin := clitest.BuildBinary(t)
	s := newTmux(t, 80, 24, slowUI(t, bin, 6000, ""))
	s.waitFor("scanning", "⟳ scanning")
	step(s, "BTab", "overview while scanning", "KEYSPACE", "read")
	step(s, "/", "the filter, from the Overview", "/ ")
	s.send("-l", "state=proc")
	s.send("Escape")
	s.waitFor("scan finished after esc in the filter", "✓ 6,000 records")
	s.send("r")
	s.waitFor("rescan", "⟳ scanning")
	s.send("Escape")
	scr := s.waitFor("cancelled", "✗ refresh cancelled", "6,000 of 6,000")
	if strings.Contains(scr, "✓") {
		t.Fatalf("a cancelled refresh looks complete:\n%s", scr)
	}
	s.send("q")
	s.waitFor("quit", "EXITED:0")
	s.tmux("kill-session", "-t", s.name)

	s = newTmux(t, 80, 24, slowUI(t, bin, 6000, ""))
	s.waitFor("scanning", "⟳ scanning")
	s.send("Escape")
	scr = s.waitFor("cancelled first scan", "✗ scan cancelled after", "every count is partial")
	if strings.Contains(scr, "✓") {
		t.Fatalf("a cancelled scan looks complete:\n%s", scr)
	}
	s.send("BTab")
	s.waitFor("overview", "KEYSPACE", "cancelled")
	s.send("q")
	s.waitFor("quit", "EXITED:0")
}

// Bug 5: at 80×24 the help overlay shows every key, the write keys too.
func TestTUIHelpAt80x24InTmux(t *testing.T) {
	bin := clitest.BuildBinary(t)
	s := newTmux(t, 80, 24, bin+" demo; echo EXITED:$?; sleep 60")
	s.waitFor("first screen", "WRITES ENABLED", "records in")
	s.send("?")
	s.waitFor("help", "1 processing", "5 unknown", "0 all states", "space mark record", "E expire / delete",
		"F force-fail", "R mark reconciled", "r rescan", "v reveal response", "S reverse sort")
	s.send("?") // closes it (esc then q at once would read as alt+q)
	s.waitFor("help closed", "of 3,")
	s.send("q")
	s.waitFor("quit", "EXITED:0")
}

// Bug 4 (and 6): a bulk force-fail cancelled part way reports numbers that
// add up, and the Writes screen folds the skipped results, scrolls to the
// oldest write, and cuts keys with an ellipsis.
func TestTUIWritesScreenScrollsInTmux(t *testing.T) {
	bin := clitest.BuildBinary(t)
	audit := recordtest.AuditPath(t)
	s := newTmux(t, 80, 24, bin+" demo --audit-log "+audit+"; echo EXITED:$?; sleep 60")
	s.waitFor("first screen", "WRITES ENABLED", "✓ 3,") // the seeded 3,000, not a scan racing the seeding
	step(s, "x", "stale filter", "filter: stale")
	step(s, "a", "marked", "marked")
	step(s, "F", "dialog", "FAIL", "Reason")
	s.send("-l", "worker crashed; orders DB checked")
	s.send("Enter")
	s.send("Enter")
	scr := s.waitFor("confirmation", "Type", "and enter to apply")
	m := regexp.MustCompile(`Type (\d+) and enter`).FindStringSubmatch(strings.Join(strings.Fields(scr), " "))
	if m == nil {
		t.Fatalf("no count to type:\n%s", scr)
	}
	s.send("-l", m[1])
	s.send("Enter")
	// 20 writes a second: stop once more writes were made than one screen holds.
	progress := regexp.MustCompile(`(\d+)/[\d,]+ writes`)
	deadline := time.Now().Add(20 * time.Second)
	for {
		p := progress.FindStringSubmatch(s.screen())
		if n, _ := strconv.Atoi(safeIndex(p, 1)); n >= 30 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the bulk write did not reach 30 writes:\n%s", s.screen())
		}
		time.Sleep(50 * time.Millisecond)
	}
	s.send("Escape")
	scr = s.waitFor("cancelled", "not attempted: cancelled", "planned writes")
	if strings.Contains(scr, m[1]+"/"+m[1]) {
		t.Fatalf("a cancelled run shows a full bar:\n%s", scr)
	}
	s.send("Enter")
	s.send("Tab")
	s.send("Tab")
	s.waitFor("writes screen", "WRITES THIS SESSION", "skipped", "records — cancelled before this write")
	top := s.screen()
	if !strings.Contains(top, "…") {
		t.Fatalf("keys are not cut with an ellipsis:\n%s", top)
	}
	s.send("G")
	scr = waitUntil(s, "G scrolls to the oldest write", func(scr string) bool {
		return !strings.Contains(scr, "WRITES THIS SESSION") && strings.Contains(scr, "applied")
	})
	if scr == top {
		t.Fatalf("G did not scroll the Writes screen:\n%s", scr)
	}
	s.send("g")
	s.waitFor("top", "WRITES THIS SESSION")
	s.send("q")
	s.waitFor("quit", "EXITED:0")
}

// step sends one key and waits for its effect.
func step(s *tmuxSession, key, what string, want ...string) string {
	s.t.Helper()
	s.send(key)
	return s.waitFor(what, want...)
}

// waitUntil polls the screen until ok accepts it.
func waitUntil(s *tmuxSession, what string, ok func(string) bool) string {
	s.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		scr := s.screen()
		if ok(scr) {
			return scr
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("%s: never happened:\n%s", what, scr)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func safeIndex(s []string, i int) string {
	if i < len(s) {
		return s[i]
	}
	return ""
}

// The TUI issue's "done when": a complete triage at 80×24 in the demo. From
// the Overview to the stale records, grouped by endpoint (the worst first),
// into a group, a record's detail, force-fail from there, the write on the
// Writes screen, and the view exported.
func TestTUITriageInTmux(t *testing.T) {
	bin := clitest.BuildBinary(t)
	dir := t.TempDir()
	s := newTmux(t, 80, 24, bin+" demo --audit-log "+filepath.Join(dir, "audit.log")+"; echo EXITED:$?; sleep 60")
	s.waitFor("first screen", "WRITES ENABLED", "✓ 3,")
	step(s, "BTab", "overview", "ALL KEYSPACES", "▸", "stale: processing past the timeout")
	step(s, "Enter", "stale records", "filter: stale", "stale")
	step(s, "=", "grouped by principal", "groups by principal")
	scr := step(s, "=", "grouped by endpoint", "groups by endpoint", "ENDPOINT")
	if !strings.Contains(scr, "STALE") {
		t.Fatalf("groups:\n%s", scr)
	}
	step(s, "Enter", "one endpoint's stale records", "esc: groups", "endpoint=")
	step(s, "Enter", "detail", "STALE?", "yes: processing for", "F force-fails")
	step(s, "F", "dialog", "FAIL 1 record(s)", "Reason")
	s.send("-l", "worker crashed; order absent in the orders DB")
	s.send("Enter")
	step(s, "Enter", "confirmation", "PROCESSING → FAILED", "Type yes and enter")
	s.send("-l", "yes")
	step(s, "Enter", "outcome", "1 applied")
	step(s, "Enter", "back on the detail, refetched", "STATE", "failed")
	step(s, "Escape", "back to the records", "esc: groups", "KEY (atlasmart")
	s.send("Tab")
	step(s, "Tab", "writes screen", "WRITES THIS SESSION", "fail", "applied")
	s.send("BTab")
	step(s, "BTab", "records again", "filter: stale")
	s.send(":")
	s.send("-l", "export "+filepath.Join(dir, "view.csv"))
	step(s, "Enter", "export", "exported")
	step(s, "q", "quit", "EXITED:0")
	data, err := os.ReadFile(filepath.Join(dir, "view.csv"))
	if err != nil || !strings.HasPrefix(string(data), "key,keyspace,state") || strings.Count(string(data), "\n") < 2 {
		t.Fatalf("export: %v\n%s", err, data)
	}
}
