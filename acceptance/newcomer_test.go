package acceptance

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/idemctl/idemctl/internal/appsim"
	"github.com/idemctl/idemctl/internal/testkit/clitest"
	"github.com/idemctl/idemctl/internal/testkit/pgtest"
	"github.com/idemctl/idemctl/internal/testkit/recordtest"
	"github.com/idemctl/idemctl/internal/testkit/redistest"
)

// The README's 3 a.m. incident, walked as a newcomer would walk it, at
// 80×24 and at 200×50: the orders application crashed some workers before
// their insert and some after, on a real Redis and a real PostgreSQL;
// idemctl --write, the Overview's stale line, the records grouped by
// customer, one record's detail, a triage of the customer's records with
// the example verify hook, the Writes screen, and an undo. Every screen
// must fit (the header on top, the keys at the bottom, nothing wrapped by
// the terminal), and every key pressed must be one the help names. At
// 80×24 every key the help names is then pressed on the Records screen,
// and each must show that it did something.
func TestNewcomerWalkInTmux(t *testing.T) {
	bin := clitest.BuildBinary(t)
	for _, size := range []struct{ w, h int }{{80, 24}, {200, 50}} {
		t.Run(fmt.Sprintf("%dx%d", size.w, size.h), func(t *testing.T) { walkIncident(t, bin, size.w, size.h) })
	}
	t.Run("demo 80x24", func(t *testing.T) { walkDemo(t, bin) })
}

// walkDemo is the README's steps 4 to 6 where the README sends a newcomer
// first, the demo: a customer's stale records triaged against the demo's
// own orders (real verdicts, each write pinned), then one write undone.
func walkDemo(t *testing.T, bin string) {
	audit := recordtest.AuditPath(t)
	s := newTmux(t, 80, 24, bin+" demo --audit-log "+audit+"; echo EXITED:$?; sleep 60")
	walk := &newcomer{s: s, w: 80, h: 24}
	walk.see("opened", "WRITES ENABLED", "KEY (atlasmart")
	walk.help()
	walk.press("BTab", "the Overview", "stale: processing past the timeout")
	walk.press("Enter", "the stale records", "filter: stale", "KEY (atlasmart")
	walk.press("=", "grouped by customer", "groups by principal")
	walk.press("Enter", "the top customer's records", "esc: groups", "KEY (atlasmart")
	walk.press("a", "all marked", "marked")
	scr := walk.press("V", "the verdicts", "VERDICT", "and enter to apply")
	if strings.Contains(scr, "no verify hook") || strings.Contains(flat(scr), "would not give the record's DUMP") {
		t.Fatalf("the demo's triage has no source of truth or no before-image:\n%s", scr)
	}
	scr = walk.readPlan(scr)
	m := regexp.MustCompile(`Type (\S+) and enter`).FindStringSubmatch(flat(scr))
	if m == nil {
		t.Fatalf("the triage dialog asks for nothing to type:\n%s", scr)
	}
	s.send("-l", m[1])
	walk.press("Enter", "the triage applied", "applied", "enter closes")
	triaged := demoTriage(t, audit)

	scr = walk.press("Tab", "the Writes screen", "WRITES THIS SESSION", "u undoes")
	walk.press("u", "the undo's reason", "Reason")
	s.send("-l", "newcomer walk: undo in the demo")
	scr = walk.press("Enter", "the undo's preview", "and enter to apply")
	if strings.Contains(flat(scr), "refused") {
		t.Fatalf("the demo's write cannot be undone:\n%s", scr)
	}
	s.send("-l", "yes")
	walk.press("Enter", "the undo applied", "applied", "enter closes")
	var undone int
	for _, e := range recordtest.AuditLines(t, audit) {
		if e.Phase == "outcome" && e.Action == "undo" && e.Outcome == "applied" && triaged[e.Key] {
			undone++
		}
	}
	if undone != 1 {
		t.Errorf("%d applied undos of the triage's writes in the demo's audit log, want 1", undone)
	}
	walk.press("Escape", "the undo closed", "WRITES THIS SESSION")
	walk.press("q", "quit", "EXITED:0")
}

// readPlan scrolls a write dialog's plan to its end, as an operator must
// before typing its count, and returns the screen there.
func (n *newcomer) readPlan(scr string) string {
	for i := 0; i < 200 && regexp.MustCompile(`\+\d+ more|↓ \d+ more`).MatchString(flat(scr)); i++ {
		n.s.send("PageDown")
		n.settled()
		scr = n.s.screen()
	}
	return scr
}

// demoTriage reads the demo's triage from its audit log: every write
// applied, each backed by a verdict from the demo's orders (reconcile with
// the order as ref where it exists, fail where it does not). It returns
// the keys written.
func demoTriage(t *testing.T, audit string) map[string]bool {
	t.Helper()
	keys := map[string]bool{}
	for _, e := range recordtest.AuditLines(t, audit) {
		if e.Phase != "intent" {
			continue
		}
		keys[e.Key] = true
		switch ev := e.Evidence; {
		case ev == nil || ev.Hook != "demo-orders":
			t.Errorf("%s was written without the demo's verdict: %+v", e.Key, ev)
		case e.Action == "reconcile" && (ev.Verdict != "done" || !strings.HasPrefix(ev.Ref, "ord-")):
			t.Errorf("%s reconciled on %+v", e.Key, ev)
		case e.Action == "fail" && ev.Verdict != "not_done":
			t.Errorf("%s failed on %+v", e.Key, ev)
		}
	}
	if len(keys) == 0 {
		t.Fatal("the demo's triage wrote nothing")
	}
	return keys
}

func walkIncident(t *testing.T, bin string, w, h int) {
	srv, rc := redistest.SharedClient(t)
	pg := pgtest.Own(t)
	app := appsim.NewOrdersApp(rc, pg.DB(), appsim.OrdersConfig{Principals: 4, CrashBeforeInsert: 0.3, CrashAfterInsert: 0.3, RandSeed: uint64(w)})
	app.Serve(40)
	time.Sleep(1500 * time.Millisecond) // past the 1s processing timeout: the crashed ones are stale
	cfg := clitest.TriageConfig(t, srv.URL(0), "1s", "20s", pg.Env(), clitest.VerifyOrders(t), "{principal}", "{idem_key}")
	audit := filepath.Join(t.TempDir(), "audit.log")
	s := newTmux(t, w, h, bin+" --write --config "+cfg+" --audit-log "+audit+"; echo EXITED:$?; sleep 60")
	walk := &newcomer{s: s, w: w, h: h}

	walk.see("opened", "WRITES ENABLED", "KEY (atlasmart")
	walk.help()
	walk.press("BTab", "the Overview", "stale: processing past the timeout")
	walk.press("Enter", "the stale records", "filter: stale", "KEY (atlasmart")
	scr := walk.press("=", "grouped by customer", "groups by principal")
	walk.press("Enter", "the top customer's records", "esc: groups", "KEY (atlasmart")
	m := regexp.MustCompile(`principal=(customer-\d+)`).FindStringSubmatch(flat(walk.s.screen()))
	if m == nil {
		t.Fatalf("the group's filter names no customer:\n%s", scr)
	}
	customer := m[1]
	scr = walk.press("Enter", "a record's detail", "STALE?", "yes: processing for", "FIELDS")
	if k := regexp.MustCompile(`KEY\s+(\S+)`).FindStringSubmatch(scr); k == nil || !strings.Contains(k[1], ":"+customer+":POST:/orders:ord-") {
		t.Errorf("the detail's key is not a whole key of %s: %q", customer, k)
	}
	walk.press("Escape", "back to the customer's records", "esc: groups", "KEY (atlasmart")
	walk.press("a", "all marked", "marked")
	scr = walk.press("V", "the verdicts", "VERDICT", "and enter to apply")
	m = regexp.MustCompile(`Type (\S+) and enter`).FindStringSubmatch(flat(scr))
	if m == nil {
		t.Fatalf("the triage dialog asks for nothing to type:\n%s", scr)
	}
	s.send("-l", m[1])
	walk.press("Enter", "the triage applied", "applied", "enter closes")

	// What the triage wrote is what the orders table says.
	tr := app.Truth()
	stuck := 0
	for _, o := range tr.CrashedAfterInsert {
		if o.Principal == customer {
			stuck++
			if h := rc.HGetAll(t.Context(), o.Key).Val(); h["state"] != "SUCCEEDED" || h["reconciled_ref"] != strconv.FormatInt(o.OrderID, 10) {
				t.Errorf("%s has order %d and is %v", o.Key, o.OrderID, h)
			}
		}
	}
	for _, o := range tr.CrashedBeforeInsert {
		if o.Principal == customer {
			stuck++
			if st := rc.HGet(t.Context(), o.Key, "state").Val(); st != "FAILED" {
				t.Errorf("%s has no order and is %s", o.Key, st)
			}
		}
	}
	if stuck == 0 || !strings.Contains(flat(scr), "Type "+strconv.Itoa(stuck)+" and enter") && !strings.Contains(flat(scr), "Type yes and enter") {
		t.Errorf("%s has %d stuck records; the dialog asked:\n%s", customer, stuck, scr)
	}

	scr = walk.press("Tab", "the Writes screen", "WRITES THIS SESSION", "u undoes")
	undone := writesSelectedKey(t, scr)
	walk.press("u", "the undo's reason", "Reason")
	s.send("-l", "newcomer walk: undo")
	walk.press("Enter", "the undo's preview", "and enter to apply")
	s.send("-l", "yes")
	walk.press("Enter", "the undo applied", "applied", "enter closes")
	if st := rc.HGet(t.Context(), undone, "state").Val(); st != "PROCESSING" {
		t.Errorf("undone %s is %s, want PROCESSING again", undone, st)
	}
	walk.press("Escape", "the undo closed", "WRITES THIS SESSION")

	if w == 80 {
		walk.press("Tab", "the Overview", "stale: processing past the timeout")
		walk.press("Tab", "the Records screen", "KEY (atlasmart")
		walk.sweep()
	}
	walk.press("q", "quit", "EXITED:0")
}

// writesSelectedKey is the key of the Writes screen's selected line (the
// one u undoes), marked ▸; the screen shows keys without the prefix every
// key of the keyspace shares.
func writesSelectedKey(t *testing.T, scr string) string {
	t.Helper()
	for _, l := range strings.Split(scr, "\n") {
		if strings.Contains(l, "▸") && !strings.Contains(l, "u undoes") {
			if k := regexp.MustCompile(`customer-\d+:POST:/orders:\S+`).FindString(l); k != "" {
				return "atlasmart:ch23:idem:" + k
			}
		}
	}
	t.Fatalf("no write selected on the Writes screen:\n%s", scr)
	return ""
}

// newcomer walks the TUI and holds it to what a newcomer needs: each
// screen fits the terminal, and each key pressed is named by the help.
type newcomer struct {
	s        *tmuxSession
	w, h     int
	helpText string
}

var tmuxKeyNames = map[string]string{"BTab": "shift+tab", "Enter": "enter", "Escape": "esc", "Tab": "tab", "Space": "space",
	"Up": "↑/k", "Down": "↓/j", "k": "↑/k", "j": "↓/j", "PageUp": "pgup", "PageDown": "pgdn", "C-f": "ctrl+f"}

func (n *newcomer) help() {
	n.s.send("?")
	n.helpText = flat(n.see("the help", "shift+tab", "Keys"))
	n.s.send("?")
}

// press sends a key the help names and waits for what it should show.
func (n *newcomer) press(key, what string, want ...string) string {
	n.s.t.Helper()
	if !n.named(key) {
		n.s.t.Errorf("%s needs %q, which the help does not name", what, key)
	}
	n.s.send(key)
	return n.see(what, want...)
}

func (n *newcomer) named(key string) bool {
	name := key
	if v, ok := tmuxKeyNames[key]; ok {
		name = v
	}
	return strings.Contains(" "+n.helpText+" ", " "+name+" ")
}

func (n *newcomer) see(what string, want ...string) string {
	n.s.t.Helper()
	scr := n.s.waitFor(what, want...)
	n.s.t.Logf("%s (%dx%d):\n%s", what, n.w, n.h, scr)
	if !strings.Contains(scr, "EXITED:") {
		n.fits(what, scr)
	}
	return scr
}

// fits fails a screen that does not fit the terminal: more lines than it
// has, a line the terminal wrapped (capture-pane -J joins those), the
// header not on top, no keys named at the bottom (a dialog names its own,
// esc and enter, in its text), or a line cut: a word ending in … where
// the screen ran out of room. Only the key hints of the last line may be
// cut so: the help names them all.
func (n *newcomer) fits(what, scr string) {
	n.s.t.Helper()
	lines := strings.Split(strings.TrimSuffix(scr, "\n"), "\n")
	joined := strings.Split(strings.TrimSuffix(n.s.tmux("capture-pane", "-p", "-J", "-t", n.s.name), "\n"), "\n")
	last := lines[len(lines)-1]
	switch {
	case len(lines) != n.h:
		n.s.t.Errorf("%s: %d lines on a %d-line terminal", what, len(lines), n.h)
	case len(joined) != len(lines):
		n.s.t.Errorf("%s: the terminal wrapped a line (%d lines, %d joined)", what, len(lines), len(joined))
	case !strings.HasPrefix(lines[0], "idemctl ·") || !strings.Contains(lines[0], "WRITES ENABLED"):
		n.s.t.Errorf("%s: the header is not on the first line: %q", what, lines[0])
	case !strings.Contains(last, "help") && !strings.Contains(last, "esc") && !strings.Contains(scr, "esc "):
		n.s.t.Errorf("%s: no key is named, neither on the last line nor in a dialog: %q", what, last)
	}
	for i, l := range lines {
		if utf8.RuneCountInString(l) > n.w {
			n.s.t.Errorf("%s: line %d is wider than %d: %q", what, i, n.w, l)
		}
		if i < len(lines)-1 && cut(l) {
			n.s.t.Errorf("%s: line %d is cut: %q", what, i+1, strings.TrimRight(l, " "))
		}
	}
}

// cutWord is a word that ends in …: the text went on past the room it had.
// (A key shortened in its middle, cust…ord-9, and the elided keyspace
// prefix, idem:…, are whole: they say what they leave out.)
var cutWord = regexp.MustCompile(`[^\s:(]…(\s|$)`)

// cut is a line with a word cut; "fetching the record…" says it is
// still at work.
func cut(l string) bool {
	return cutWord.MatchString(l) && !atWork.MatchString(l)
}

var atWork = regexp.MustCompile(`(fetching|scanning|rescanning|pinning)\b`)

// sweep presses, on the Records screen, every key the help names (but q)
// and fails one that shows nothing for it: a key that cannot act here
// must say why. Each is then undone so the next starts from the table.
func (n *newcomer) sweep() {
	n.s.t.Helper()
	type probe struct{ key, back string }
	// Out of the customer's group, then its filters off: the whole table.
	// (A key right after esc would reach the program as alt+key.)
	for _, k := range []string{"Escape", "Escape", "c"} {
		n.s.send(k)
		n.settled()
	}
	n.s.waitFor("the whole table", "40 of 40")
	probes := []probe{{"Down", ""}, {"Up", ""}, {"j", ""}, {"k", ""}, {"PageDown", ""}, {"PageUp", ""}, {"G", ""}, {"g", ""},
		{"Enter", "Escape"}, {"Escape", ""}, {"Tab", "BTab"}, {"BTab", "Tab"}, {"?", "?"}, {"/", "Escape"},
		{"c", ""}, {"x", "c"}, {"f", "c"}, {"s", ""}, {"S", ""}, {"1", "0"}, {"2", "0"}, {"3", "0"}, {"4", "0"}, {"5", "0"}, {"0", ""},
		{"=", "Escape"}, {"Space", "u"}, {"a", "u"}, {"u", ""}, {"E", "Escape"}, {"F", "Escape"}, {"R", "Escape"}, {"V", "Escape"},
		{"C-f", "Escape"}, {"n", ""}, {"y", ""}, {"N", ""}, {"Y", ""}, {":", "Escape"}, {"r", ""}, {"v", "Escape"}}
	for _, p := range probes {
		if !n.named(p.key) {
			n.s.t.Errorf("the sweep presses %q, which the help does not name", p.key)
		}
		before := n.settled()
		time.Sleep(100 * time.Millisecond) // apart from an esc before it
		n.s.send(p.key)
		_, ok := n.changed(before)
		after := n.s.screen()
		if !ok {
			n.s.t.Errorf("%q, named by the help, showed nothing on the Records screen:\n%s", p.key, after)
		}
		n.fits("after "+p.key, after)
		if p.back != "" {
			n.s.send(p.back)
			n.settled()
		}
	}
}

// styled is the screen with its attributes: the selected row differs
// from the others only in them.
func (n *newcomer) styled() string { return n.s.tmux("capture-pane", "-p", "-e", "-t", n.s.name) }

// settled waits until the screen stops changing and returns it.
func (n *newcomer) settled() string { return settle(n.styled) }

// settle captures the screen until two captures 150 ms apart differ in
// no more than the clock (at most 4.5 s) and returns the last.
func settle(capture func() string) string {
	prev := capture()
	for range 30 {
		time.Sleep(150 * time.Millisecond)
		cur := capture()
		if ticked(cur) == ticked(prev) {
			return cur
		}
		prev = cur
	}
	return prev
}

// changed waits up to 3s for the screen to differ from before in more
// than the clock: the ages, TTLs and read times tick by themselves.
func (n *newcomer) changed(before string) (string, bool) {
	deadline := time.Now().Add(3 * time.Second)
	for {
		cur := n.styled()
		if ticked(cur) != ticked(before) || readAt(cur) != readAt(before) {
			return cur, true
		}
		if time.Now().After(deadline) {
			return cur, false
		}
		time.Sleep(100 * time.Millisecond)
	}
}

var digits = regexp.MustCompile(`[0-9]+(\.[0-9]+)?(ms|µs|s|m|h|d)?`)

func ticked(scr string) string { return digits.ReplaceAllString(scr, "#") }

// readAt is the header's "read at" time: a rescan changes only that.
func readAt(scr string) string { return regexp.MustCompile(`read at \S+`).FindString(scr) }

func flat(s string) string { return strings.Join(strings.Fields(s), " ") }
