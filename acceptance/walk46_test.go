package acceptance

import (
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/idemctl/idemctl/internal/testkit/clitest"
)

// Issue 46's TUI findings, each on the real demo at 80×24 in tmux, as a
// newcomer meets them: pages read to their end under the demo's running
// refresh (every 3 s), the warning banner readable, a write's whole plan
// reachable before its count is typed, the filter inside a group, and two
// rows of one endpoint told apart.

// demo46 starts the demo at 80×24 with its own audit log and waits for
// the seeded records.
func demo46(t *testing.T, bin string) *tmuxSession {
	t.Helper()
	audit := filepath.Join(t.TempDir(), "audit.log")
	s := newTmux(t, 80, 24, bin+" demo --audit-log "+audit+"; echo EXITED:$?; sleep 60")
	s.waitFor("first screen", "WRITES ENABLED", "✓ 3,")
	return s
}

// pastRefresh waits for two more scans to finish (the screen's "read at"
// changes twice), so a refresh has swapped in while the page was shown.
func pastRefresh(s *tmuxSession) string {
	s.t.Helper()
	scr := s.screen()
	for range 2 {
		before := readAt(scr)
		scr = waitUntil(s, "a refresh", func(scr string) bool { r := readAt(scr); return r != "" && r != before })
	}
	return scr
}

// pageEnd presses key until the page no longer says more lines follow,
// and returns the screen.
func pageEnd(s *tmuxSession, key, what string) string {
	s.t.Helper()
	for range 80 {
		if scr := s.screen(); !strings.Contains(scr, "more lines") {
			return scr
		}
		s.send(key)
	}
	return waitUntil(s, what+": "+key+" reaches the end", func(scr string) bool { return !strings.Contains(scr, "more lines") })
}

// Finding 3: the Overview and the Stats read to their last line with G,
// with pgdn and with j, and stay there across the demo's refreshes; so
// does a record's detail with G.
func TestWalk46PagesScrollToTheirEndInTmux(t *testing.T) {
	bin := clitest.BuildBinary(t)
	s := demo46(t, bin)
	pages := []struct {
		key, title, last string
	}{
		{"BTab", "ALL KEYSPACES", "j/k select · enter: the records · tab: next screen"},
		{"Tab", "STATES", "STALE BY MINUTE RESERVED"},
	}
	for i, p := range pages {
		if i > 0 {
			s.send("Tab") // Overview → Records → Stats
		}
		step(s, p.key, "the page", p.title, "more lines")
		for _, key := range []string{"G", "PageDown", "j"} {
			s.send("g")
			s.waitFor(p.title+" top", p.title, "more lines")
			pageEnd(s, key, p.title)
			scr := pastRefresh(s)
			if strings.Contains(scr, "more lines") || !strings.Contains(flat(scr), p.last) {
				t.Fatalf("%s, %s then a refresh: the page is not at its end (%q):\n%s", p.title, key, p.last, scr)
			}
		}
	}
	s.send("Tab") // Stats → Writes → Overview → Records
	s.send("Tab")
	step(s, "Tab", "the Records", "KEY (atlasmart")
	step(s, "Enter", "a record's detail", "STALE?", "more lines")
	step(s, "G", "the detail's end", "FIELDS")
	if scr := pastRefresh(s); strings.Contains(scr, "more lines") {
		t.Fatalf("the detail left its end after a refresh:\n%s", scr)
	}
	step(s, "q", "quit", "EXITED:0")
}

// Finding 6: in a group's records, / starts from the group's term and a
// space: a term typed after it filters (the records of the customer that
// are stale), where it was glued onto the customer and matched nothing.
func TestWalk46FilterInsideAGroupInTmux(t *testing.T) {
	bin := clitest.BuildBinary(t)
	s := demo46(t, bin)
	step(s, "=", "grouped by customer", "groups by principal")
	scr := step(s, "Enter", "the top customer's records", "esc: groups", "principal=")
	who := regexp.MustCompile(`principal=(customer-\d+)`).FindStringSubmatch(flat(scr))
	if who == nil {
		t.Fatalf("the group's filter names no customer:\n%s", scr)
	}
	step(s, "/", "the filter input", "/ principal="+who[1])
	s.send("-l", "flag=stale")
	scr = step(s, "Enter", "the filter applied", "filter: principal="+who[1]+" flag=stale")
	n := regexp.MustCompile(`([\d,]+) of [\d,]+`).FindStringSubmatch(flat(scr))
	if n == nil || n[1] == "0" || !strings.Contains(scr, who[1]+":") {
		t.Fatalf("principal=%s flag=stale shows no record:\n%s", who[1], scr)
	}
	step(s, "q", "quit", "EXITED:0")
}

// Finding 7: at 80 columns the rows of one customer and one long endpoint
// read apart (the cut keeps the request id's tail), and rows the sort
// ties keep their order across refreshes.
func TestWalk46RowsOfOneEndpointInTmux(t *testing.T) {
	bin := clitest.BuildBinary(t)
	s := demo46(t, bin)
	step(s, "/", "the filter input", "/ ")
	s.send("-l", "endpoint=POST:/v2/checkout:confirm")
	step(s, "Enter", "one endpoint", "filter: endpoint=POST:/v2/checkout:confirm")
	step(s, "2", "its succeeded records", "state=succeeded")
	step(s, "=", "by customer", "RECORDS", "PRINCIPAL")
	scr := step(s, "Enter", "one customer's", "esc: groups")
	before := tableKeys(scr)
	if len(before) < 5 {
		t.Fatalf("%d rows of one customer and endpoint, want 5 or more:\n%s", len(before), scr)
	}
	seen := map[string]bool{}
	for _, k := range before {
		if seen[k] || !regexp.MustCompile(`\d\d$`).MatchString(k) {
			t.Fatalf("a row reads %q: the request id that tells it apart is cut away or shared:\n%s", k, scr)
		}
		seen[k] = true
	}
	after := tableKeys(pastRefresh(s))
	if a, b := common(before, after), common(after, before); strings.Join(a, "\n") != strings.Join(b, "\n") {
		t.Fatalf("a refresh reordered tied rows:\n%q\n%q", a, b)
	}
	step(s, "q", "quit", "EXITED:0")
}

// tableKeys are the KEY cells of the Records table on screen, in order.
func tableKeys(scr string) []string {
	var keys []string
	for _, l := range strings.Split(scr, "\n") {
		if i := strings.Index(l, "customer-"); i >= 0 && regexp.MustCompile(`^\*?[a-z]+ `).MatchString(l) {
			keys = append(keys, strings.TrimSpace(l[i:]))
		}
	}
	return keys
}

// common is the elements of a that b holds too, in a's order.
func common(a, b []string) []string {
	var out []string
	for _, x := range a {
		if slices.Contains(b, x) {
			out = append(out, x)
		}
	}
	return out
}

// demoGapFix is the demo's cannot-judge banner's fix, as stats says it.
const demoGapFix = "fix: judge them with --max-processing-no-ttl 0; repair with idemctl scan --flag processing_no_ttl, " +
	"then idemctl fail or expire; make the reserve step set a TTL"

// Finding 4: at 80 columns the warning banner says w shows it whole; w
// shows its cause and its fix, on the Records and the Overview, and the
// help names w.
func TestWalk46WarningBannerReadableInTmux(t *testing.T) {
	bin := clitest.BuildBinary(t)
	s := demo46(t, bin)
	scr := s.waitFor("the folded banner", "cannot judge", "w: the whole warning")
	if strings.Contains(flat(scr), demoGapFix) {
		t.Fatalf("the folded banner already shows the fix: the test proves nothing:\n%s", scr)
	}
	step(s, "w", "the whole banner on Records", "they have no TTL and no stored timestamp", demoGapFix, "KEY (atlasmart")
	step(s, "BTab", "the whole banner on the Overview", demoGapFix, "ALL KEYSPACES")
	step(s, "w", "folded again", "w: the whole warning", "ALL KEYSPACES")
	step(s, "?", "the help", "w whole warning banner")
	s.send("?")
	step(s, "q", "quit", "EXITED:0")
}

// Finding 5: every line of a write's plan is reachable before its count is
// typed, the count in sight on every page: a force-fail of every stale
// record lists each of them, and the triage (V, the demo's orders table
// as its source of truth) each verdict with its record.
func TestWalk46WholePlanBeforeTheCountInTmux(t *testing.T) {
	bin := clitest.BuildBinary(t)
	s := demo46(t, bin)
	step(s, "x", "stale filter", "filter: stale")
	step(s, "a", "marked", "marked")
	step(s, "F", "the force-fail dialog", "FAIL", "Reason")
	s.send("-l", "worker crashed; no order")
	s.send("Enter")
	scr := step(s, "Enter", "the plan", "and enter to apply", "more lines of the plan")
	m := regexp.MustCompile(`and the same change on ([\d,]+) more`).FindStringSubmatch(flat(scr))
	if m == nil {
		t.Fatalf("the plan names no other record:\n%s", scr)
	}
	keys := planRows(s, regexp.MustCompile(`customer-\d+:\S+`))
	if want := count46(m[1]) + 1; len(keys) != want {
		t.Fatalf("the plan showed %d records of the %d it writes", len(keys), want)
	}
	step(s, "Escape", "the dialog closed", "KEY (atlasmart")
	time.Sleep(200 * time.Millisecond) // a key right after esc would read as alt+key
	scr = step(s, "V", "the verdicts", "VERDICT", "more lines of the plan")
	m = regexp.MustCompile(`TRIAGE ([\d,]+) record`).FindStringSubmatch(flat(scr))
	if m == nil {
		t.Fatalf("the triage names no count:\n%s", scr)
	}
	rows := planRows(s, regexp.MustCompile(`^\S+\s+(?:reconcile|fail|left alone)\s+(\S+)`))
	if want := count46(m[1]); len(rows) != want {
		t.Fatalf("the triage showed %d verdicts of its %d records", len(rows), want)
	}
	step(s, "Escape", "the dialog closed", "KEY (atlasmart")
	time.Sleep(200 * time.Millisecond)
	step(s, "q", "quit", "EXITED:0")
}

// planRows pages through the confirm step's plan with pgdn to its end,
// each page still asking for the count, and returns the plan lines that
// match row, by their place in the plan: two records whose keys are cut
// to the same text in an 80-column dialog are still two rows. A page's
// place comes from its "↓ N more lines" line: its first line is N₁−N
// below the first page's, and the last page (no such line) ends the plan,
// so its first line is N₁−1 below.
func planRows(s *tmuxSession, row *regexp.Regexp) map[string]bool {
	s.t.Helper()
	more := regexp.MustCompile(`↓ ([\d,]+) more lines of the plan`)
	seen := map[string]bool{}
	first := -1 // N on the first page
	for range 100 {
		// A frame is written in pieces: a page read mid-write would mix
		// two pages (seen on a loaded machine).
		scr := settle(s.screen)
		if !strings.Contains(flat(scr), "and enter to apply") {
			s.t.Fatalf("the confirmation left the screen:\n%s", scr)
		}
		m := more.FindStringSubmatch(scr)
		offset := 0
		switch {
		case m != nil && first < 0:
			first = count46(m[1])
		case m != nil:
			offset = first - count46(m[1])
		case first >= 0:
			offset = first - 1
		}
		for i, l := range strings.Split(scr, "\n") {
			if row.MatchString(l) {
				seen[strconv.Itoa(offset+i)] = true
			}
		}
		if m == nil {
			return seen
		}
		s.send("PageDown")
		waitUntil(s, "the next page", func(now string) bool { return planLines(now) != planLines(scr) })
	}
	s.t.Fatalf("pgdn never reached the plan's end:\n%s", s.screen())
	return nil
}

// planLines are a dialog's lines under its title: what pgdn moves.
func planLines(scr string) string {
	lines := strings.Split(scr, "\n")
	return strings.Join(lines[min(3, len(lines)):], "\n")
}

// count46 reads a grouped count (1,200).
func count46(s string) int {
	n, _ := strconv.Atoi(strings.ReplaceAll(s, ",", ""))
	return n
}
