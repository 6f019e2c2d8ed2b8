package ui

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/redis/go-redis/v9"

	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/inspect/streams"
	"github.com/idemctl/idemctl/internal/testkit/redistest"
	"github.com/idemctl/idemctl/internal/testkit/streamtest"
	"github.com/idemctl/idemctl/ui/common"
	uistreams "github.com/idemctl/idemctl/ui/streams"
)

// hostileStream is a stream whose key, group, consumer and field are
// terminal escapes, with a 1 MB value of them.
const hostileStream = "st:\x1b[31mevil"

// seedStreams builds, on a real server, stream st:orders with group
// billing: six entries added an hour ago, c1 read three, c2 two, one of
// c1's acknowledged, one left undelivered; XCLAIM … IDLE sets idle times
// and deliveries exactly: c1's first idle 10m (stale after the default
// 5m), its third delivered 7 times (poison after 5), c2's idle 1s. Group
// audit read nothing. And the hostile stream, one entry pending.
func seedStreams(t *testing.T, c *redis.Client) []string {
	t.Helper()
	ctx := context.Background()
	ids := streamtest.SeedGroups(t, c, "st:orders")
	base, _, _ := strings.Cut(ids[0], "-") // an hour ago, as the fixture's
	must := func(args ...any) {
		t.Helper()
		if err := c.Do(ctx, args...).Err(); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
	}

	unit := "\x1b[2J\x1b]52;c;AAAA\x07\u202e"
	evil := strings.Repeat(unit, 1<<20/len(unit)+1)[:1<<20]
	must("xadd", hostileStream, base+"-1", "\x1b[31mname", evil, "ok", "fine")
	must("xgroup", "create", hostileStream, "g\x1b]0;title\x07", "0")
	must("xreadgroup", "group", "g\x1b]0;title\x07", "c\x1b[2J", "count", 1, "streams", hostileStream, ">")
	return ids
}

// streamsModel is a model on c with the stream keyspace st:*, 80×24, its
// Streams screen not open yet.
func streamsModel(t *testing.T, srv *redistest.Server, c *redis.Client) *Model {
	t.Helper()
	sp := streams.Space{Name: "orders", Match: "st:*"}.WithDefaults()
	m := New(t.Context(), Options{Client: c, Keyspaces: []*inspect.Keyspace{testKeyspace(t)}, Address: srv.URL(0),
		NoColor: true, Now: func() time.Time { return clock }, StreamSpaces: []*streams.Space{&sp}})
	t.Cleanup(m.shutdown)
	m.resize(80, 24)
	return m
}

// openStreamsScreen types :streams; the read runs in the returned Cmd,
// never in Update: the screen says it is reading until it is run.
func openStreamsScreen(t *testing.T, m *Model) {
	t.Helper()
	press(m, ":")
	typeText(m, "streams")
	_, cmd := m.Update(tea.KeyPressMsg{Code: tea.KeyEnter})
	if got := screenText(m); !strings.Contains(got, "stream keyspaces for their consumer groups") || cmd == nil {
		t.Fatalf("before the read ran:\n%s", got)
	}
	run(m, cmd)
}

// pressRun presses one key and runs what it started.
func pressRun(m *Model, k string) {
	msg := tea.KeyPressMsg{Code: []rune(k)[0], Text: k}
	if k == "enter" {
		msg = tea.KeyPressMsg{Code: tea.KeyEnter}
	}
	_, cmd := m.Update(msg)
	run(m, cmd)
}

// rowFields is the fields of the one line holding every one of want.
func rowFields(t *testing.T, m *Model, want ...string) []string {
	t.Helper()
	var found []string
	for _, l := range strings.Split(screenText(m), "\n") {
		all := true
		for _, w := range want {
			all = all && strings.Contains(l, w)
		}
		if all {
			if found != nil {
				t.Fatalf("two lines hold %q:\n%s", want, screenText(m))
			}
			found = strings.Fields(strings.TrimPrefix(strings.TrimSpace(l), "▸"))
		}
	}
	if found == nil {
		t.Fatalf("no line holds %q:\n%s", want, screenText(m))
	}
	return found
}

// cutMidWord is the newcomer walk's test for a word cut short: a word
// ending in … (a name cut in its middle, st:or…ers, is whole).
var cutMidWord, atWork = regexp.MustCompile(`[^\s:(]…(\s|$)`), regexp.MustCompile(`(fetching|scanning|rescanning|pinning)\b`)

// checkStreamsFrame is checkFrame, no word cut short and no raw escape.
func checkStreamsFrame(t *testing.T, m *Model) {
	t.Helper()
	checkFrame(t, m)
	// NoColor leaves only SGR (bold, dim, reverse): any other ESC, BEL or
	// bidi mark here came from Redis.
	text := regexp.MustCompile(`\x1b\[[0-9;]*m`).ReplaceAllString(m.View().Content, "")
	if strings.ContainsAny(text, "\x1b\x07\u202e") {
		t.Fatalf("a raw control character reached the terminal:\n%q", text)
	}
	for i, l := range strings.Split(screenText(m), "\n") {
		if cutMidWord.MatchString(l) && !atWork.MatchString(l) {
			t.Errorf("line %d has a word cut short: %q", i, l)
		}
	}
}

func eq(t *testing.T, what string, got []string, want ...string) {
	t.Helper()
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("%s: %q, want %q", what, got, want)
	}
}

// The groups table shows XINFO's and XPENDING's exact counts; enter opens
// a group's consumers and entries, enter again an entry's fields; esc
// goes back up one level at a time, to the screen :streams came from.
func TestStreamsScreenDrillDown(t *testing.T) {
	srv, c := redistest.SharedClient(t)
	ids := seedStreams(t, c)
	m := streamsModel(t, srv, c)
	openStreamsScreen(t, m)
	checkStreamsFrame(t, m)
	text := screenText(m)
	if !strings.Contains(text, "STREAMS · 2 streams · 3 groups · 5 pending · 1 stale · 1 poison") {
		t.Errorf("title:\n%s", text)
	}
	eq(t, "billing", rowFields(t, m, "st:orders", "billing"), "st:orders", "billing", "4", "1", "1", "1h00m", "2", "1")
	eq(t, "audit", rowFields(t, m, "st:orders", "audit"), "st:orders", "audit", "0", "0", "0", "-", "0", "0")
	// At 80 columns the group's name is cut in its middle, whole at 120.
	eq(t, "hostile", rowFields(t, m, `st:\x1b[31mevil`), `st:\x1b[31mevil`, `g\x1b…itle\x07`, "1", "0", "0", "1h00m", "1", "0")
	m.resize(120, 24)
	eq(t, "hostile at 120", rowFields(t, m, `st:\x1b[31mevil`)[:2], `st:\x1b[31mevil`, `g\x1b]0;title\x07`)
	m.resize(80, 24)

	press(m, "j", "j", "enter") // the hostile stream sorts first, then audit
	checkStreamsFrame(t, m)
	text = screenText(m)
	for _, want := range []string{"GROUP billing  of st:orders  keyspace orders", "4 pending · 1 stale · 1 poison · lag 1 · oldest 1h00m old, idle 10m00s",
		"stale after 5m00s idle · poison after 5 deliveries", "CONSUMERS (2)", "PENDING ENTRIES"} {
		if !strings.Contains(text, want) {
			t.Errorf("group view lacks %q:\n%s", want, text)
		}
	}
	for _, c := range []string{"c1", "c2"} {
		if !regexp.MustCompile(`(?m)^  ` + c + ` +2 +[0-9.]+m?s *$`).MatchString(text) {
			t.Errorf("consumer %s with 2 pending not listed:\n%s", c, text)
		}
	}
	e0 := rowFields(t, m, ids[0])
	eq(t, "stale entry", []string{e0[0], e0[1], e0[2], e0[3], e0[4]}, ids[0], "c1", "10m00s", "1", "STALE")
	e2 := rowFields(t, m, ids[2])
	eq(t, "poison entry", []string{e2[0], e2[1], e2[3], e2[4]}, ids[2], "c1", "7", "POISON")
	if e3 := rowFields(t, m, ids[3]); len(e3) != 4 || e3[1] != "c2" || e3[3] != "1" {
		t.Errorf("c2's entry: %q", e3)
	}
	if strings.Contains(text, ids[1]) || strings.Contains(text, ids[5]) {
		t.Errorf("the acknowledged or undelivered entry is listed:\n%s", text)
	}

	press(m, "j")
	pressRun(m, "enter") // ids[2], the poison one
	checkStreamsFrame(t, m)
	text = screenText(m)
	for _, want := range []string{"ENTRY " + ids[2] + "  of st:orders  group billing", "consumer c1 · idle", "delivery count 7 · POISON", "FIELDS (1 of 1)"} {
		if !strings.Contains(text, want) {
			t.Errorf("entry view lacks %q:\n%s", want, text)
		}
	}
	eq(t, "field", rowFields(t, m, "  n "), "n", "3")

	press(m, "esc")
	if st := m.streams; st.Shown().Level != uistreams.LevelGroup || st.Shown().EntryID != ids[2] {
		t.Fatalf("esc from the entry: level %d, entry %s", st.Shown().Level, st.Shown().EntryID)
	}
	press(m, "esc")
	if st := m.streams; st.Shown().Level != uistreams.LevelGroups || st.Shown().GroupRow != 2 {
		t.Fatalf("esc from the group: level %d, row %d", st.Shown().Level, st.Shown().GroupRow)
	}
	press(m, "esc")
	if m.screen != screenRecords {
		t.Fatalf("esc from the groups went to screen %d, want Records", m.screen)
	}
}

// / filters the entries by consumer or ID text, x keeps the stale ones, c
// clears both; r re-reads what the server has now; the record write keys
// say the screen reads only; the Overview counts stale and poison entries.
func TestStreamsScreenFiltersAndReread(t *testing.T) {
	srv, c := redistest.SharedClient(t)
	ids := seedStreams(t, c)
	m := streamsModel(t, srv, c)
	openStreamsScreen(t, m)
	press(m, "j", "j", "enter")
	entries := func() []string {
		var out []string
		for _, e := range m.streams.Shown().Entries {
			out = append(out, e.ID)
		}
		return out
	}

	press(m, "/")
	typeText(m, "c2")
	if got := screenText(m); !strings.Contains(got, "/ c2") || !strings.Contains(got, "enter applies") {
		t.Fatalf("typing the filter:\n%s", got)
	}
	press(m, "enter")
	eq(t, "consumer c2", entries(), ids[3], ids[4])
	checkStreamsFrame(t, m)
	if got := screenText(m); !strings.Contains(got, "filter: c2") {
		t.Errorf("the filter is not shown:\n%s", got)
	}
	press(m, "x")
	if got := screenText(m); len(entries()) != 0 || !strings.Contains(got, "no pending entry matches the filter (c clears it)") {
		t.Errorf("c2 and stale: %q\n%s", entries(), got)
	}
	press(m, "c", "/")
	typeText(m, ids[2][len(ids[2])-4:]) // the tail of an ID
	press(m, "enter")
	eq(t, "ID text", entries(), ids[2])
	press(m, "c", "x")
	eq(t, "stale only", entries(), ids[0])
	press(m, "esc")
	if rows := m.streams.Shown().Groups; len(rows) != 1 || rows[0] != "billing" {
		t.Errorf("stale only keeps the groups %+v, want billing alone", rows)
	}
	press(m, "c")

	// The record write keys say which keys write entries; in this
	// read-only session the entry keys say how to turn writes on.
	for _, k := range []string{"F", "R", "E", " ", "T", "A", "D", "a"} {
		m.Status = ""
		press(m, k)
		want := common.ReadOnlyHint
		if strings.Contains("FRE", k) {
			want = "here " + uistreams.EntryWritesHint
		}
		if !strings.Contains(m.Status, want) || m.screen != screenStreams || m.dialog != nil || m.streams.Shown().Marked != 0 {
			t.Errorf("%q on the Streams screen: status %q, screen %d", k, m.Status, m.screen)
		}
	}

	// Acknowledged behind the screen's back: r shows it.
	if err := c.XAck(t.Context(), "st:orders", "billing", ids[0]).Err(); err != nil {
		t.Fatal(err)
	}
	pressRun(m, "r")
	eq(t, "billing re-read", rowFields(t, m, "st:orders", "billing"), "st:orders", "billing", "3", "0", "1", "1h00m", "2", "1")

	press(m, "esc", "tab", "tab", "tab") // Records, then on to the Overview
	if m.screen != screenOverview {
		t.Fatalf("screen %d, want the Overview", m.screen)
	}
	checkStreamsFrame(t, m)
	if got := screenText(m); !strings.Contains(got, "streams: 0 stale and 1 poison pending entries in 3 groups — :streams shows them") {
		t.Errorf("the Overview's streams line:\n%s", got)
	}
}

// An entry's hostile fields are shown escaped; the 1 MB value is cut on
// the server and says its length; every level fits 80×24 and 60×20.
func TestStreamsScreenHostileEntry(t *testing.T) {
	srv, c := redistest.SharedClient(t)
	seedStreams(t, c)
	m := streamsModel(t, srv, c)
	openStreamsScreen(t, m)
	press(m, "enter")
	checkStreamsFrame(t, m)
	if got := screenText(m); !strings.Contains(got, `GROUP g\x1b]0;title\x07`) {
		t.Fatalf("hostile group:\n%s", got)
	}
	if got := screenText(m); !regexp.MustCompile(`(?m)^  c\\x1b\[2J +1 +[0-9.]+m?s *$`).MatchString(got) {
		t.Errorf("the hostile consumer is not listed escaped:\n%s", got)
	}
	pressRun(m, "enter")
	checkStreamsFrame(t, m)
	text := screenText(m)
	for _, want := range []string{"FIELDS (2 of 2)", `\x1b[31mname \x1b[2J\x1b]52;c;AAAA\x07\u202e`,
		"‹1.0MiB value: the first 4.0KiB read, 600 characters shown›", "ok"} {
		if !strings.Contains(strings.Join(strings.Fields(text), " "), want) {
			t.Errorf("entry view lacks %q:\n%s", want, text)
		}
	}
	press(m, "G")
	checkStreamsFrame(t, m)
	if got := screenText(m); !strings.Contains(got, " fine") {
		t.Errorf("G does not reach the last field:\n%s", got)
	}
	m.resize(60, 20)
	checkStreamsFrame(t, m)
	press(m, "esc")
	checkStreamsFrame(t, m)
	press(m, "esc")
	checkStreamsFrame(t, m)
}

// Without a stream keyspace the screen says how to configure one, and
// the Overview has no streams line.
func TestStreamsScreenNotConfigured(t *testing.T) {
	m := newTestModel(t, 80, 24, fixture(testKeyspace(t), 10))
	press(m, ":")
	typeText(m, "streams")
	_, cmd := m.Update(tea.KeyPressMsg{Code: tea.KeyEnter})
	if cmd != nil {
		t.Fatal("a read started with no stream keyspace")
	}
	checkStreamsFrame(t, m)
	if got := screenText(m); !strings.Contains(got, "no stream keyspace in this profile") {
		t.Fatalf("screen:\n%s", got)
	}
	press(m, "esc")
	if m.screen != screenRecords {
		t.Fatalf("esc went to screen %d, want Records", m.screen)
	}
	m.screen = screenOverview
	if strings.Contains(screenText(m), "streams:") {
		t.Fatalf("screen %d:\n%s", m.screen, screenText(m))
	}
}

// More groups than the body holds: the table scrolls with the selection
// and still fits 80×24.
func TestStreamsScreenScrollsManyGroups(t *testing.T) {
	srv, c := redistest.SharedClient(t)
	for i := range 40 {
		if err := c.XGroupCreateMkStream(t.Context(), fmt.Sprintf("st:s%02d", i), "workers", "$").Err(); err != nil {
			t.Fatal(err)
		}
	}
	m := streamsModel(t, srv, c)
	openStreamsScreen(t, m)
	checkStreamsFrame(t, m)
	if got := screenText(m); !strings.Contains(got, "▸ st:s00") || strings.Contains(got, "st:s39") {
		t.Fatalf("first page:\n%s", got)
	}
	press(m, "G")
	checkStreamsFrame(t, m)
	if got := screenText(m); !strings.Contains(got, "▸ st:s39") || strings.Contains(got, "st:s00") {
		t.Fatalf("after G:\n%s", got)
	}
	press(m, "k", "g")
	if got := screenText(m); !strings.Contains(got, "▸ st:s00") {
		t.Fatalf("after g:\n%s", got)
	}
}
