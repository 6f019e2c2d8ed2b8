package ui

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/idemctl/idemctl/actions"
	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/inspect/filter"
	"github.com/idemctl/idemctl/internal/testkit/inspecttest"
)

var update = flag.Bool("update", false, "rewrite golden files")

var clock = time.Date(2026, 12, 2, 3, 14, 15, 0, time.UTC)

func testKeyspace(t testing.TB) *inspect.Keyspace {
	t.Helper()
	return inspecttest.Keyspace(t, "atlasmart")
}

// fixture builds n deterministic records in the lesson's format.
func fixture(ks *inspect.Keyspace, n int) []inspect.Record {
	eps := []string{"POST:/orders", "POST:/payments", "PUT:/carts/items"}
	out := make([]inspect.Record, n)
	for i := range out {
		key := fmt.Sprintf("atlasmart:ch23:idem:customer-%d:%s:req-%05d", i%7+1, eps[i%3], i)
		g, _ := ks.Template.Match(key)
		r := inspect.Record{Key: key, Keyspace: ks, Groups: g, Type: inspect.TypeHash, MemoryBytes: 232 + int64(i%5)*16,
			Fingerprint: fmt.Sprintf("%064x", i*7919), AgeMs: -1, ResponseLen: -1}
		switch i % 10 {
		case 0, 1:
			r.State, r.RawState, r.TTLms = inspect.StateProcessing, "PROCESSING", 20_000-int64(i%9)*100
			r.AgeMs, r.AgeSource, r.Flags = 60_000-r.TTLms, inspect.AgeTTL, inspect.FlagStale
		case 2:
			r.State, r.RawState, r.TTLms = inspect.StateProcessing, "PROCESSING", -1
			r.Flags = inspect.FlagNoTTL | inspect.FlagProcessingNoTTL
		case 3:
			r.State, r.RawState, r.TTLms = inspect.StateProcessing, "PROCESSING", 55_000
			r.AgeMs, r.AgeSource = 5_000, inspect.AgeTTL
		default:
			r.State, r.RawState, r.TTLms, r.Status, r.ResponseLen = inspect.StateSucceeded, "SUCCEEDED", 250_000-int64(i), 201, 51
		}
		out[i] = r
	}
	return out
}

// newTestModel is a model fed by hand: no Redis, a fixed clock, no colour,
// no executor (read-only).
func newTestModel(t testing.TB, w, h int, recs []inspect.Record) *Model {
	t.Helper()
	return newTestModelWith(t, w, h, recs, nil)
}

// newTestModelWith is newTestModel with an executor whose policy it shows.
func newTestModelWith(t testing.TB, w, h int, recs []inspect.Record, ex *actions.Executor) *Model {
	t.Helper()
	ks := recs[0].Keyspace
	m := New(t.Context(), Options{Keyspaces: []*inspect.Keyspace{ks}, Profile: "local",
		Address: "redis://127.0.0.1:6379/0", User: "default", NoColor: true, Now: func() time.Time { return clock },
		Executor: ex})
	m.resize(w, h)
	m.scan.beginRun()
	for i := 0; i < len(recs); i += 1000 {
		b := inspect.Batch{Keyspace: ks, Records: recs[i:min(i+1000, len(recs))], ServerTimeMs: clock.UnixMilli()}
		m.Update(batchMsg{gen: m.scan.gen, batches: []inspect.Batch{b}})
	}
	m.Update(scanDoneMsg{gen: m.scan.gen, covs: []inspect.Coverage{{Keyspace: ks.Name, Keys: int64(len(recs)), Records: int64(len(recs)), Complete: true}}})
	return m
}

func press(m *Model, keys ...string) {
	for _, k := range keys {
		var msg tea.KeyPressMsg
		switch k {
		case "enter":
			msg = tea.KeyPressMsg{Code: tea.KeyEnter}
		case "esc":
			msg = tea.KeyPressMsg{Code: tea.KeyEscape}
		case "tab":
			msg = tea.KeyPressMsg{Code: tea.KeyTab}
		case "pgdown":
			msg = tea.KeyPressMsg{Code: tea.KeyPgDown}
		default:
			r := []rune(k)[0]
			msg = tea.KeyPressMsg{Code: r, Text: k}
		}
		m.Update(msg)
	}
}

func typeText(m *Model, s string) {
	for _, r := range s {
		m.Update(tea.KeyPressMsg{Code: r, Text: string(r)})
	}
}

func screenText(m *Model) string { return ansi.Strip(m.View().Content) }

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		os.MkdirAll("testdata", 0o755)
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./ui -update to create it)", err)
	}
	if string(want) != got {
		t.Errorf("%s differs from golden:\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

func checkFrame(t *testing.T, m *Model) {
	t.Helper()
	lines := strings.Split(screenText(m), "\n")
	if len(lines) != m.Height {
		t.Fatalf("frame has %d lines, terminal %d", len(lines), m.Height)
	}
	for i, l := range lines {
		if w := ansi.StringWidth(l); w > m.Width {
			t.Fatalf("line %d is %d cells wide (terminal %d): %q", i, w, m.Width, l)
		}
	}
}

func TestRecordsScreenGolden(t *testing.T) {
	m := newTestModel(t, 80, 24, fixture(testKeyspace(t), 60))
	checkFrame(t, m)
	golden(t, "records_80x24", screenText(m))
	m.resize(160, 40)
	checkFrame(t, m)
	golden(t, "records_160x40", screenText(m))
}

// The path: filter to stale records, open one, read why it is stale
// and how its age was derived.
func TestFilterStaleOpenDetail(t *testing.T) {
	m := newTestModel(t, 80, 24, fixture(testKeyspace(t), 60))
	press(m, "x", "s")
	if got := len(m.store.view); got != 12 {
		t.Fatalf("stale filter shows %d records, want 12", got)
	}
	checkFrame(t, m)
	golden(t, "stale_sorted_80x24", screenText(m))
	press(m, "j", "enter")
	if m.screen != screenDetail || m.detail.cur == nil {
		t.Fatal("enter did not open the detail screen")
	}
	r := m.detail.cur.scanned
	d := inspect.Detail{Record: r, FieldCount: 2, Encoding: "listpack", Fields: []inspect.Field{
		{Name: "fingerprint", Value: r.Fingerprint, Len: 64}, {Name: "state", Value: "PROCESSING", Len: 10}}}
	m.Update(detailMsg{key: "someone else", d: d}) // stale reply: ignored
	if m.detail.cur.d != nil {
		t.Fatal("applied a detail reply for another key")
	}
	m.Update(detailMsg{key: r.Key, d: d})
	text := screenText(m)
	for _, want := range []string{"STALE", "from the TTL: reserve TTL 1m00s", "longer than the processing timeout 30.0s",
		"encoding listpack", "principal=customer-", "FIELDS (2 of 2)"} {
		if !strings.Contains(strings.Join(strings.Fields(text), " "), want) {
			t.Errorf("detail lacks %q:\n%s", want, text)
		}
	}
	checkFrame(t, m)
	golden(t, "detail_stale_80x24", text)
	clock = clock.Add(3 * time.Second) // the TTL counts down live
	m.Update(tickMsg(clock))
	if !strings.Contains(screenText(m), "16.") && !strings.Contains(screenText(m), "17.") {
		t.Errorf("TTL did not count down:\n%s", screenText(m))
	}
	clock = clock.Add(-3 * time.Second)
	press(m, "?")
	if !m.keyHelp.open || m.screen != screenDetail {
		t.Fatal("? on the detail screen did not open the help over it")
	}
	press(m, "x") // closes the help, back on the detail screen
	press(m, "esc")
	if m.screen != screenRecords {
		t.Fatal("esc did not go back")
	}
}

func TestResponseRedactedUntilRevealed(t *testing.T) {
	recs := fixture(testKeyspace(t), 10)
	m := newTestModel(t, 100, 30, recs)
	m.records.cursor = 4 // a succeeded record
	press(m, "enter")
	r := m.detail.cur.scanned
	resp := `{"order_id":"ord-SECRET-42"}`
	m.Update(detailMsg{key: r.Key, d: inspect.Detail{Record: r, FieldCount: 3, Fields: []inspect.Field{
		{Name: "response", Value: resp, Len: int64(len(resp))}, {Name: "state", Value: "SUCCEEDED", Len: 9}}}})
	if text := screenText(m); strings.Contains(text, "SECRET") || !strings.Contains(text, "redacted") {
		t.Fatalf("response not redacted:\n%s", text)
	}
	press(m, "v")
	if text := screenText(m); !strings.Contains(text, `"order_id": "ord-SECRET-42"`) {
		t.Fatalf("revealed response not pretty-printed:\n%s", text)
	}
}

func TestFilterInputAndHotkeys(t *testing.T) {
	m := newTestModel(t, 80, 24, fixture(testKeyspace(t), 70))
	filterBy(m, "principal=customer-2 endpoint=POST:/orders")
	for pos := range m.store.view {
		r := m.store.at(pos)
		if r.Group("principal") != "customer-2" || r.Group("endpoint") != "POST:/orders" {
			t.Fatalf("filter let through %s", r.Key)
		}
	}
	if len(m.store.view) == 0 {
		t.Fatal("capture filter matched nothing")
	}
	press(m, "c", "1")
	if n := len(m.store.view); n != 28 {
		t.Fatalf("processing hotkey: %d, want 28", n)
	}
	press(m, "1")           // again: off
	press(m, "f", "f", "f") // third flag: processing_no_ttl
	if n := len(m.store.view); n != 7 {
		t.Fatalf("flag cycle to processing_no_ttl: %d, want 7", n)
	}
	press(m, "c")
	filterBy(m, "*req-0006?")
	if n := len(m.store.view); n != 10 {
		t.Fatalf("glob: %d, want 10", n)
	}
	press(m, "c")
	filterBy(m, "state=nonsense")
	// Bug 3: the refusal shows at once, under the input still open.
	if text := screenText(m); !m.records.filtering || !strings.Contains(text, `✗ unknown state "nonsense"`) || !strings.Contains(text, "/ state=nonsense") {
		t.Fatalf("a bad filter should stay open with an error: filtering=%v\n%s", m.records.filtering, text)
	}
	checkFrame(t, m)
	press(m, "esc")
	press(m, "G")
	if m.records.cursor != len(m.store.view)-1 {
		t.Fatalf("G: cursor %d of %d", m.records.cursor, len(m.store.view))
	}
	press(m, "g", "pgdown")
	if m.records.cursor != m.recordsSized().tableRows() {
		t.Fatalf("pgdown: cursor %d", m.records.cursor)
	}
}

func TestScreensHelpAndHostileText(t *testing.T) {
	recs := fixture(testKeyspace(t), 30)
	recs[0].Key = "atlasmart:ch23:idem:\x1b]52;c;ZXZpbA==\x07:POST:/x:\xff\x9b"
	recs[0].Groups = nil
	recs[0].Flags |= inspect.FlagTemplateMismatch
	recs[0].Fingerprint = "\x1b[2J"
	m := newTestModel(t, 80, 24, recs)
	raw := m.View().Content
	if strings.Contains(raw, "\x07") || strings.Contains(raw, "\x1b]52") || strings.Contains(raw, "\x1b[2J") {
		t.Fatalf("raw control sequence from Redis reached the terminal: %q", raw)
	}
	m.resize(200, 24)
	if !strings.Contains(screenText(m), `\x1b]52;c;ZXZpbA==\x07`) {
		t.Fatalf("hostile key not shown escaped:\n%s", screenText(m))
	}
	m.resize(80, 24)
	press(m, "?")
	checkFrame(t, m)
	golden(t, "help_80x24", screenText(m))
	press(m, "q") // any key closes help, not quit
	if m.keyHelp.open {
		t.Fatal("help still open")
	}
	press(m, "tab")
	checkFrame(t, m)
	golden(t, "stats_80x24", screenText(m))
	press(m, "tab")
	golden(t, "overview_80x24", screenText(m))
}

func TestStaleGenerationsAndFaults(t *testing.T) {
	ks := testKeyspace(t)
	m := newTestModel(t, 80, 24, fixture(ks, 20))
	old := m.scan.gen
	m.scan.beginRun() // a refresh: fills a pending store
	m.Update(batchMsg{gen: old, batches: []inspect.Batch{{Keyspace: ks, Records: fixture(ks, 500)}}})
	if m.store.recs.Len() != 20 || m.scan.run.pending == nil || m.scan.run.pending.recs.Len() != 0 {
		t.Fatal("a result from an old generation was applied")
	}
	m.records.cursor = 5
	key := m.recordsSized().cursorKey()
	fresh := fixture(ks, 40)
	m.Update(batchMsg{gen: m.scan.gen, batches: []inspect.Batch{{Keyspace: ks, Records: fresh}}})
	if m.store.recs.Len() != 20 {
		t.Fatal("a refresh must not replace the table until it completes")
	}
	m.Update(scanDoneMsg{gen: m.scan.gen, covs: []inspect.Coverage{{Keyspace: ks.Name, Complete: true}}})
	if m.store.recs.Len() != 40 || m.recordsSized().cursorKey() != key {
		t.Fatalf("after refresh: %d records, cursor on %q want %q", m.store.recs.Len(), m.recordsSized().cursorKey(), key)
	}
	// Connection lost mid-scan: banner, data kept and marked stale, retry scheduled.
	m.scan.beginRun()
	_, cmd := m.Update(scanDoneMsg{gen: m.scan.gen, covs: []inspect.Coverage{{Keyspace: ks.Name, Err: errors.New("dial tcp 127.0.0.1:6379: connect: connection refused")}}})
	if cmd == nil || !m.scan.dataStale || m.store.recs.Len() != 40 {
		t.Fatalf("fault: cmd %v stale %v records %d", cmd != nil, m.scan.dataStale, m.store.recs.Len())
	}
	text := screenText(m)
	if !strings.Contains(text, "connection problem") || !strings.Contains(text, "(stale)") {
		t.Fatalf("no fault banner:\n%s", text)
	}
	checkFrame(t, m)
	// Esc cancels a running scan; its late results are dropped.
	m.scan.beginRun()
	gen := m.scan.gen
	press(m, "esc")
	m.Update(batchMsg{gen: gen, batches: []inspect.Batch{{Keyspace: ks, Records: fixture(ks, 5)}}})
	if m.scan.scanning() || m.scan.run.pending.recs.Len() != 0 || !strings.Contains(m.Status, "cancelled") {
		t.Fatalf("cancel: scanning %v status %q", m.scan.scanning(), m.Status)
	}
}

// Rendering cost must not depend on how many records are loaded.
func BenchmarkRender1M(b *testing.B) {
	ks := testKeyspace(b)
	base := fixture(ks, 1000)
	recs := make([]inspect.Record, 1_000_000)
	for i := range recs {
		recs[i] = base[i%1000]
	}
	m := newTestModel(b, 120, 40, recs)
	m.records.cursor = 500_000
	m.recordsSized().clampCursor()
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		_ = m.View()
	}
}

// Streaming 1M records into the table in the default order (stale first):
// the view is merged a bounded number of times, never re-sorted per batch.
func BenchmarkLiveScan1M(b *testing.B) {
	ks := testKeyspace(b)
	base := fixture(ks, 1000)
	for range b.N {
		m := New(context.Background(), Options{Keyspaces: []*inspect.Keyspace{ks}, NoColor: true, Now: func() time.Time { return clock }})
		m.resize(120, 40)
		m.scan.beginRun()
		m.records.cursor = 5 // off the top: the cursor is kept on its record
		for range 1000 {
			m.Update(batchMsg{gen: m.scan.gen, batches: []inspect.Batch{{Keyspace: ks, Records: base, ServerTimeMs: clock.UnixMilli()}}})
		}
		m.Update(scanDoneMsg{gen: m.scan.gen, covs: []inspect.Coverage{{Keyspace: ks.Name, Complete: true}}})
	}
}

// heldRecords is how many records BenchmarkRenderHeld and
// BenchmarkFilterHeld hold: IDEMCTL_BENCH_HELD (the harness sets it to its
// N in the 10M mode), 1,000,000 by default.
func heldRecords(b *testing.B) int {
	n := 1_000_000
	if v := os.Getenv("IDEMCTL_BENCH_HELD"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 1000 {
			b.Fatalf("IDEMCTL_BENCH_HELD=%q: want a record count of at least 1000", v)
		}
	}
	return n
}

func heldModel(b *testing.B) *Model {
	ks := testKeyspace(b)
	base := fixture(ks, 1000)
	recs := make([]inspect.Record, heldRecords(b))
	for i := range recs {
		recs[i] = base[i%1000]
	}
	m := newTestModel(b, 120, 40, recs)
	m.records.cursor = len(recs) / 2
	m.recordsSized().clampCursor()
	return m
}

// A frame with every held record in the store (named for the count, so the
// report can say which).
func BenchmarkRenderHeld(b *testing.B) {
	m := heldModel(b)
	b.Run(strconv.Itoa(m.store.recs.Len()), func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			_ = m.View()
		}
	})
}

// A filter typed over every held record: a key substring, which reads
// every record's key; the view rebuilt and sorted. Clearing it again is
// not timed.
func BenchmarkFilterHeld(b *testing.B) {
	m := heldModel(b)
	s, err := filter.ParseSearch("customer-1")
	if err != nil {
		b.Fatal(err)
	}
	b.Run(strconv.Itoa(m.store.recs.Len()), func(b *testing.B) {
		for range b.N {
			m.store.f = filter.Filter{Search: s}
			m.recordsSized().withCursorKept(m.store.rebuild)
			if len(m.store.view) == 0 || len(m.store.view) == m.store.recs.Len() {
				b.Fatalf("filter kept %d of %d", len(m.store.view), m.store.recs.Len())
			}
			b.StopTimer()
			m.store.f = filter.Filter{}
			m.recordsSized().withCursorKept(m.store.rebuild)
			b.StartTimer()
		}
	})
}

// The held-record benchmarks the harness runs in its 10M mode, at a
// thousand records: CI runs no benchmarks, so this keeps them working.
func TestHeldBenchmarksRun(t *testing.T) {
	t.Setenv("IDEMCTL_BENCH_HELD", "1000")
	for name, bench := range map[string]func(*testing.B){"RenderHeld": BenchmarkRenderHeld, "FilterHeld": BenchmarkFilterHeld} {
		if r := testing.Benchmark(bench); r.N == 0 {
			t.Errorf("Benchmark%s failed or did not run", name)
		}
	}
}

// A filter over a full, sorted table walks the kept full order instead of
// sorting what it keeps: the rows are exactly those of a fresh sort, for
// every column and direction, while streaming and after.
func TestFilterFromFullOrder(t *testing.T) {
	ks := testKeyspace(t)
	recs := fixture(ks, 3000)
	filters := []string{"customer-1", "req-00", "state=processing", "flag=stale", ""}
	for col := colNone; col < numSortCols; col++ {
		for _, desc := range []bool{false, true} {
			s := newStore(0)
			s.sortCol, s.sortDesc = col, desc
			s.rebuild()
			for i := 0; i < len(recs); i += 500 { // streamed, merged as the TUI does
				s.add(recs[i : i+500])
				s.mergeTail(true)
			}
			for _, text := range filters {
				search, err := filter.ParseSearch(text)
				if err != nil {
					t.Fatal(err)
				}
				s.f = filter.Filter{Search: search}
				s.rebuild()
				fresh := newStore(0)
				fresh.add(recs)
				fresh.sortCol, fresh.sortDesc, fresh.f = col, desc, s.f
				fresh.rebuild()
				if !slices.Equal(s.view, fresh.view) {
					t.Fatalf("sort %v desc %v filter %q: %d rows, a fresh sort gives %d (first %v vs %v)", col, desc, text,
						len(s.view), len(fresh.view), s.view[:min(5, len(s.view))], fresh.view[:min(5, len(fresh.view))])
				}
			}
			if len(s.all) != len(recs) || s.allBy != (order{col, desc}) {
				t.Fatalf("sort %v desc %v: full order not kept (%d records, by %v)", col, desc, len(s.all), s.allBy)
			}
		}
	}
}

// A large store is matched on several cores: the same records as one by
// one, each worker on its own words of the bitmap.
func TestParallelMatch(t *testing.T) {
	ks := testKeyspace(t)
	base := fixture(ks, 1000)
	s := newStore(0)
	for range parallelMatch/1000 + 7 {
		s.add(base)
	}
	search, err := filter.ParseSearch("customer-1")
	if err != nil {
		t.Fatal(err)
	}
	s.f = filter.Filter{Search: search}
	kept := s.matching()
	n := 0
	for i := range s.recs.Len() {
		want := s.f.Match(s.recs.At(i))
		if got := kept[i>>6]&(1<<(i&63)) != 0; got != want {
			t.Fatalf("record %d: kept %v, matches %v", i, got, want)
		}
		if want {
			n++
		}
	}
	if n == 0 || n == s.recs.Len() {
		t.Fatalf("%d of %d kept: the filter says nothing", n, s.recs.Len())
	}
}
