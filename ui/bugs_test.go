package ui

import (
	"strings"
	"testing"
	"time"

	"charm.land/bubbles/v2/progress"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/idemctl/idemctl/actions"
	"github.com/idemctl/idemctl/actions/write"
	"github.com/idemctl/idemctl/inspect"
)

// feed streams recs into the running scan, as batches of 1,000.
func feed(m *Model, recs []inspect.Record) {
	ks := recs[0].Keyspace
	for i := 0; i < len(recs); i += 1000 {
		b := inspect.Batch{Keyspace: ks, Records: recs[i:min(i+1000, len(recs))], ServerTimeMs: clock.UnixMilli()}
		m.Update(batchMsg{gen: m.scan.gen, batches: []inspect.Batch{b}})
	}
}

// scanningModel is a model of opts (no colour, the fixed clock) w×24 wide,
// its first scan started and nothing read yet.
func scanningModel(t *testing.T, w int, opts Options) *Model {
	t.Helper()
	opts.NoColor, opts.Now = true, func() time.Time { return clock }
	m := New(t.Context(), opts)
	m.resize(w, 24)
	m.scan.beginRun()
	return m
}

// filterBy types a filter and applies it.
func filterBy(m *Model, text string) {
	press(m, "/")
	typeText(m, text)
	press(m, "enter")
}

func finish(m *Model, n int) {
	ks := m.Opts.Keyspaces[0]
	m.Update(scanDoneMsg{gen: m.scan.gen, covs: []inspect.Coverage{{Keyspace: ks.Name, Keys: int64(n), Records: int64(n), Complete: true}}})
}

// Bug 1: a filter or sort changed while a refresh runs survives the swap.
func TestRefreshKeepsFilterAndSortChangedDuringIt(t *testing.T) {
	ks := testKeyspace(t)
	m := newTestModel(t, 80, 24, fixture(ks, 60))
	m.scan.beginRun() // a background refresh starts with no filter
	feed(m, fixture(ks, 70))
	press(m, "x")      // stale only, while it runs
	press(m, "s", "s") // and another order
	wantSort, wantDesc := m.store.sortCol, m.store.sortDesc
	finish(m, 70)
	if !m.store.f.Stale || len(m.store.view) != 14 {
		t.Fatalf("after the refresh: filter %q, %d rows; want stale, 14", m.store.f.String(), len(m.store.view))
	}
	if m.store.sortCol != wantSort || m.store.sortDesc != wantDesc {
		t.Fatalf("sort %v/%v after the refresh, want %v/%v", m.store.sortCol, m.store.sortDesc, wantSort, wantDesc)
	}
	for pos := 1; pos < len(m.store.view); pos++ {
		if m.store.less(m.store.view[pos-1], m.store.view[pos]) > 0 {
			t.Fatalf("view out of order at %d", pos)
		}
	}
	if st := screenText(m); !strings.Contains(st, "14 of 70 · filter: stale") {
		t.Fatalf("status line:\n%s", st)
	}
}

// Bug 2: esc closes the filter input and nothing else; a scan the operator
// does cancel is never shown as complete.
func TestEscInFilterKeepsScanAndCancelIsPartial(t *testing.T) {
	ks := testKeyspace(t)
	m := scanningModel(t, 80, Options{Keyspaces: []*inspect.Keyspace{ks}, Address: "redis://127.0.0.1:6379/0"})
	feed(m, fixture(ks, 3000))
	press(m, "/")
	typeText(m, "state=proc")
	press(m, "esc")
	if !m.scan.scanning() || m.records.filtering {
		t.Fatalf("esc in the filter input: scanning %v, filtering %v", m.scan.scanning(), m.records.filtering)
	}
	// From the Overview (the first screen with several keyspaces), / goes
	// to the Records' filter: what is typed after it is never hotkeys.
	press(m, "tab", "tab", "tab", "/")
	typeText(m, "state=proc")
	press(m, "esc")
	if m.screen != screenRecords || !m.scan.scanning() {
		t.Fatalf("/ on the Overview: screen %v, scanning %v", m.screen, m.scan.scanning())
	}
	press(m, "esc") // the operator does stop the scan
	if m.scan.scanning() {
		t.Fatal("esc on the table did not stop the scan")
	}
	text := screenText(m)
	if strings.Contains(text, "✓") || !strings.Contains(text, "scan cancelled") || !strings.Contains(text, "partial") {
		t.Fatalf("a cancelled scan looks complete:\n%s", text)
	}
	press(m, "tab", "tab", "tab") // overview
	if text := screenText(m); !strings.Contains(text, "cancelled") || strings.Contains(text, "3,000 read") {
		t.Fatalf("overview of a cancelled scan:\n%s", text)
	}
}

// bulkRun puts a finished bulk force-fail in the dialog: n records, the
// first refused of them not writable at the preview, cancelled after
// attempted writes of which gone had vanished since the preview.
func bulkRun(t *testing.T, m *Model, n, refused, attempted, gone int) {
	t.Helper()
	recs := fixture(testKeyspace(t), n)
	d := &dialog{shared: m.shared, kind: write.KindFail, targets: recs, step: stepRunning, bar: progress.New(progress.WithWidth(40), progress.WithoutPercentage())}
	for i := range recs {
		p := &actions.Plan{Request: actions.Request{Kind: write.KindFail, Key: recs[i].Key, Keyspace: recs[i].Keyspace}}
		if i < refused {
			p.Refused, p.Outcome = "the key does not exist", write.NotFound
		}
		d.plans = append(d.plans, p)
	}
	d.results = make([]actions.Result, n)
	d.cancel = func() {}
	m.dialog = d
	ch := make(chan writeMsg, n)
	m.writeCh = ch
	for i, p := range d.plans {
		r := actions.Result{Key: p.Key, Action: write.KindFail, Outcome: write.Applied}
		switch {
		case i < refused:
			r.Outcome, r.Detail = p.Outcome, p.Refused
		case i >= refused+attempted:
			r.Outcome, r.Detail = write.Skipped, "cancelled before this write"
		case i < refused+gone:
			r.Outcome, r.Detail = write.NotFound, "the key does not exist"
		}
		m.Update(writeMsg{i: i, r: r})
	}
	m.Update(writesDoneMsg{})
}

// Bug 6: a cancelled bulk write accounts for every record the preview
// counted, and the bar shows the writes attempted, not the records seen.
func TestCancelledBulkWriteNumbersAgreeWithPreview(t *testing.T) {
	m := newTestModelWith(t, 80, 24, fixture(testKeyspace(t), 10), executor(t, true))
	bulkRun(t, m, 86, 4, 31, 1)
	text := strings.Join(strings.Fields(screenText(m)), " ")
	for _, want := range []string{"31/82 writes", "31 of 82 planned writes: 30 applied · 1 not_found (the record changed since the preview) · 51 not attempted: cancelled",
		"4 not writable, as the preview said (4 not_found)"} {
		if !strings.Contains(text, want) {
			t.Errorf("bulk report lacks %q:\n%s", want, screenText(m))
		}
	}
	if strings.Contains(text, "86/86") {
		t.Errorf("the bar counts records never attempted:\n%s", screenText(m))
	}
	checkFrame(t, m)
}

// Bug 4: the Writes screen scrolls, folds a cancelled run's skipped
// results into one line, and cuts keys with an ellipsis.
func TestWritesScreenScrollsAndFolds(t *testing.T) {
	m := newTestModelWith(t, 80, 24, fixture(testKeyspace(t), 10), executor(t, true))
	bulkRun(t, m, 86, 4, 31, 1)
	m.dialog = nil
	press(m, "tab", "tab") // Writes
	if m.screen != screenWrites {
		t.Fatalf("screen %v", m.screen)
	}
	text := screenText(m)
	if !strings.Contains(text, "skipped     51 records — cancelled before this write") {
		t.Fatalf("skipped results not folded:\n%s", text)
	}
	m.resize(60, 20)
	if text := screenText(m); !strings.Contains(text, "customer-7:…ayments:req-00034") {
		t.Fatalf("long keys not cut with an ellipsis:\n%s", text)
	}
	checkFrame(t, m)
	m.resize(80, 24)
	first := text
	press(m, "j", "j")
	if screenText(m) == first {
		t.Fatal("j does not scroll the Writes screen")
	}
	press(m, "G")
	text = screenText(m)
	if !strings.Contains(text, "not_found") || !strings.Contains(text, "req-00000") {
		t.Fatalf("G does not reach the oldest writes:\n%s", text)
	}
	m.Update(tea.MouseWheelMsg{Button: tea.MouseWheelUp})
	m.Update(tea.MouseWheelMsg{Button: tea.MouseWheelUp})
	if screenText(m) == text {
		t.Fatal("the wheel does not scroll the Writes screen")
	}
}

// indentOf is the column of a line's first non-space character.
func indentOf(l string) int { return len(l) - len(strings.TrimLeft(l, " ")) }

// Bug 8: a wrapped detail line continues under its value, revealed JSON is
// wrapped once, and a dialog never splits a key.
func TestWrappingHangsUnderTheValue(t *testing.T) {
	ks := testKeyspace(t)
	recs := fixture(ks, 10)
	m := newTestModel(t, 80, 40, recs)
	press(m, "enter") // a stale record: first in the default order
	r := m.detail.cur.scanned
	long := `{"order_id":"ord-1","note":"` + strings.Repeat("lorem ipsum ", 60) + `"}`
	m.Update(detailMsg{key: r.Key, d: inspect.Detail{Record: r, FieldCount: 2, Fields: []inspect.Field{
		{Name: "response", Value: long, Len: int64(len(long)), TTLms: -1}, {Name: "state", Value: "PROCESSING", Len: 10, TTLms: -1}}}})
	m.detail.vp.SetHeight(200)
	lines := strings.Split(ansi.Strip(m.detail.vp.View()), "\n")
	under := map[string]int{"STALE?": 13, "stuck": 23, "stale ": 23}
	for i, l := range lines {
		for label, col := range under {
			if !strings.HasPrefix(strings.TrimLeft(l, " "), label) || i+1 >= len(lines) {
				continue
			}
			next := lines[i+1]
			if strings.TrimSpace(next) != "" && indentOf(next) != col && indentOf(next) < col {
				t.Errorf("the line after %q starts at column %d, want %d:\n%s\n%s", label, indentOf(next), col, l, next)
			}
		}
	}
	m.resize(220, 60)
	press(m, "v")
	m.detail.vp.SetHeight(400)
	lines = strings.Split(ansi.Strip(m.detail.vp.View()), "\n")
	var note []string
	inResponse := false
	for i, l := range lines {
		inResponse = inResponse || strings.HasPrefix(l, "RESPONSE")
		if inResponse && strings.Contains(l, `"note":`) {
			note = lines[i:]
			break
		}
	}
	if len(note) < 3 {
		t.Fatalf("revealed response:\n%s", strings.Join(lines, "\n"))
	}
	// The note is about 740 characters at 220 columns: four lines, each but
	// the last nearly full, continuations under the value's first character.
	for i, l := range note[:3] {
		if w := ansi.StringWidth(strings.TrimRight(l, " ")); w < 180 || w > 220 {
			t.Errorf("JSON line %d is %d wide (wrapped twice?):\n%s", i, w, strings.Join(note[:5], "\n"))
		}
		if i > 0 && indentOf(l) != 4 {
			t.Errorf("JSON continuation %d starts at column %d, want 4", i, indentOf(l))
		}
	}
}

// Bug 8: a dialog shows a long key cut in its middle, on one line.
func TestDialogNeverSplitsKeys(t *testing.T) {
	recs := fixture(testKeyspace(t), 10)
	recs[0].Key = "atlasmart:ch23:idem:customer-1:POST:/orders/with/a/very/long/path/segment:req-0123456789abcdef0123456789abcdef"
	m := newTestModelWith(t, 60, 20, recs, executor(t, true))
	m.records.cursor = m.store.find(recs[0].Key)
	press(m, "F")
	text := screenText(m)
	if !strings.Contains(text, "req-0123456789abcdef0123456789abcdef") && !strings.Contains(text, "…") {
		t.Fatalf("dialog:\n%s", text)
	}
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, "customer-1") && !strings.Contains(l, "abcdef") {
			t.Fatalf("the key is split over lines:\n%s", text)
		}
	}
	checkFrame(t, m)
}

// Bug 5: at 80×24 the help overlay shows every key, the write keys
// included; on a shorter terminal j/k scroll it.
func TestHelpFitsEightyColumns(t *testing.T) {
	m := newTestModelWith(t, 80, 24, fixture(testKeyspace(t), 30), executor(t, true))
	press(m, "?")
	checkFrame(t, m)
	text := screenText(m)
	for _, want := range append([]string{"1 processing", "5 unknown", "0 all states", "E expire / delete", "F force-fail",
		"R mark reconciled", "r rescan", "v reveal response", "S reverse sort", "G bottom", "shift+tab previous screen"}, writeHelp...) {
		if !strings.Contains(strings.Join(strings.Fields(text), " "), want) {
			t.Errorf("help at 80×24 lacks %q:\n%s", want, text)
		}
	}
	golden(t, "help_writes_80x24", text)
	m.resize(60, 20)
	press(m, "j", "j", "j")
	if !m.keyHelp.open {
		t.Fatal("j closed the help")
	}
	checkFrame(t, m)
	golden(t, "help_writes_60x20", screenText(m))
	press(m, "x")
	if m.keyHelp.open {
		t.Fatal("another key did not close the help")
	}
}

// The progress line gives the share done, from the SCAN cursor, and the
// time left at the pace so far.
func TestScanProgressShareAndTimeLeft(t *testing.T) {
	ks := testKeyspace(t)
	now := clock
	m := New(t.Context(), Options{Keyspaces: []*inspect.Keyspace{ks}, NoColor: true, Now: func() time.Time { return now }})
	m.resize(100, 24)
	m.scan.beginRun()
	now = now.Add(2 * time.Second)
	b := inspect.Batch{Keyspace: ks, Records: fixture(ks, 500), ServerTimeMs: clock.UnixMilli(), Done: 0.25}
	m.Update(batchMsg{gen: m.scan.gen, batches: []inspect.Batch{b}})
	if got := screenText(m); !strings.Contains(got, "⟳ scanning: 25% · 500 records · 250/s · 2.0s · 6.0s left") {
		t.Fatalf("progress line:\n%s", got)
	}
}
