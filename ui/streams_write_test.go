package ui

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/redis/go-redis/v9"

	"github.com/idemctl/idemctl/actions"
	"github.com/idemctl/idemctl/actions/audit"
	"github.com/idemctl/idemctl/actions/write"
	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/inspect/streams"
	"github.com/idemctl/idemctl/internal/testkit/recordtest"
	"github.com/idemctl/idemctl/internal/testkit/redistest"
	"github.com/idemctl/idemctl/ui/common"
	uistreams "github.com/idemctl/idemctl/ui/streams"
)

// entryFixture is a Streams screen on a real server, opened on group
// workers of st:jobs: ids[0] and ids[1] pending to c1 idle 20m (stale),
// ids[2] to c1 delivered twice, ids[3] to c2; the keyspace dead-letters
// to dlq:{stream}.
type entryFixture struct {
	m     *Model
	c     *redis.Client
	audit string
	ids   []string
}

func seedJobs(t *testing.T, c *redis.Client) []string {
	t.Helper()
	ctx := context.Background()
	must := func(args ...any) {
		t.Helper()
		if err := c.Do(ctx, args...).Err(); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
	}
	var ids []string
	for i := 1; i <= 4; i++ {
		id, err := c.XAdd(ctx, &redis.XAddArgs{Stream: "st:jobs", Values: []any{"job", fmt.Sprint(i)}}).Result()
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	must("xgroup", "create", "st:jobs", "workers", "0")
	must("xreadgroup", "group", "workers", "c1", "count", 3, "streams", "st:jobs", ">")
	must("xreadgroup", "group", "workers", "c2", "count", 1, "streams", "st:jobs", ">")
	must("xclaim", "st:jobs", "workers", "c1", 0, ids[0], ids[1], "idle", 20*60*1000, "retrycount", 1, "justid")
	must("xclaim", "st:jobs", "workers", "c1", 0, ids[2], "idle", 1000, "retrycount", 2, "justid")
	must("xclaim", "st:jobs", "workers", "c2", 0, ids[3], "idle", 1000, "retrycount", 1, "justid")
	return ids
}

// newEntryFixture opens the group's entries in a session that writes
// (or not), 80×24.
func newEntryFixture(t *testing.T, writes bool) *entryFixture {
	t.Helper()
	srv, c := redistest.SharedClient(t)
	ids := seedJobs(t, c)
	auditLog := recordtest.AuditPath(t)
	ex, err := actions.NewExecutor(actions.Setup{Client: c, AuditPath: auditLog, Identity: audit.Identity{OSUser: "tester"},
		Policy: &actions.Policy{Writes: writes, Profile: "local"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ex.Close() })
	sp := streams.Space{Name: "jobs", Match: "st:*", DeadLetter: "dlq:{stream}"}.WithDefaults()
	m := New(t.Context(), Options{Client: c, Keyspaces: []*inspect.Keyspace{testKeyspace(t)}, Address: srv.URL(0), Profile: "local",
		NoColor: true, Now: func() time.Time { return clock }, StreamSpaces: []*streams.Space{&sp}, Executor: ex})
	t.Cleanup(m.shutdown)
	m.resize(80, 24)
	openStreamsScreen(t, m)
	press(m, "enter")
	if m.streams.Shown().Level != uistreams.LevelGroup || len(m.streams.Shown().Entries) != 4 {
		t.Fatalf("the group is not open with its 4 entries:\n%s", screenText(m))
	}
	return &entryFixture{m: m, c: c, audit: auditLog, ids: ids}
}

// pendingOf is an entry's consumer and delivery count as XPENDING says.
func (f *entryFixture) pendingOf(t *testing.T, id string) (string, int64, time.Duration, bool) {
	t.Helper()
	ps, err := f.c.XPendingExt(t.Context(), &redis.XPendingExtArgs{Stream: "st:jobs", Group: "workers", Start: id, End: id, Count: 1}).Result()
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) == 0 {
		return "", 0, 0, false
	}
	return ps[0].Consumer, ps[0].RetryCount, ps[0].Idle, true
}

// enterRun presses enter and runs what it started (the plan, the write).
func enterRun(m *Model) {
	_, cmd := m.Update(tea.KeyPressMsg{Code: tea.KeyEnter})
	run(m, cmd)
}

func wantText(t *testing.T, m *Model, wants ...string) {
	t.Helper()
	text := screenText(m)
	flat := strings.Join(strings.Fields(text), " ")
	for _, w := range wants {
		if !strings.Contains(flat, w) {
			t.Errorf("the screen lacks %q:\n%s", w, text)
		}
	}
}

// Two stale entries marked (x, a), T: the form starts at claim to the
// keyspace's recovery consumer; the preview says each entry's change;
// the count applies both: pending to idemctl-recovery, deliveries +1,
// an intent and an outcome each in the audit log; the screen re-reads.
func TestStreamsRetryMarkedStaleEntries(t *testing.T) {
	f := newEntryFixture(t, true)
	m, ids := f.m, f.ids
	press(m, "x", "a")
	if n := m.streams.Shown().Marked; n != 2 || !strings.Contains(screenText(m), "2 marked") {
		t.Fatalf("%d marked:\n%s", n, screenText(m))
	}
	eq(t, "marked row", rowFields(t, m, ids[1])[:2], "*"+ids[1], "c1")
	press(m, "T")
	if m.dialog == nil || m.dialog.value("Mode") != "claim" || m.dialog.value("To") != "idemctl-recovery" {
		t.Fatalf("T's form: %+v", m.dialog)
	}
	checkStreamsFrame(t, m)
	wantText(t, m, "RETRY 2 pending entries", "entries: st:jobs "+ids[0]+", st:jobs "+ids[1], "redeliver: the same consumer")
	press(m, "enter", "enter")
	enterRun(m) // no reason
	if m.dialog.step != stepForm || m.dialog.errText != "a reason is required for every write" {
		t.Fatalf("no reason: step %v %q", m.dialog.step, m.dialog.errText)
	}
	m.dialog.focus = 0
	m.dialog.focusInput()
	typeText(m, "worker c1 crashed")
	press(m, "enter", "enter")
	enterRun(m)
	checkStreamsFrame(t, m)
	for _, id := range ids[:2] {
		wantText(t, m, id+" consumer c1 → idemctl-recovery · deliveries 1 → 2 · idle 20m00s → 0s")
	}
	wantText(t, m, "st:jobs · group workers", "undoable: u on the Writes screen", "Type 2 and enter")
	typeText(m, "2")
	enterRun(m)
	if m.dialog.step != stepDone {
		t.Fatalf("step %v:\n%s", m.dialog.step, screenText(m))
	}
	wantText(t, m, "2 of 2 planned writes: 2 applied", "enter closes and re-reads the streams")
	checkStreamsFrame(t, m)
	for _, id := range ids[:2] {
		if c, d, _, ok := f.pendingOf(t, id); !ok || c != "idemctl-recovery" || d != 2 {
			t.Errorf("%s after the retry: %q %d %v", id, c, d, ok)
		}
	}
	if c, d, _, _ := f.pendingOf(t, ids[2]); c != "c1" || d != 2 {
		t.Errorf("an unmarked entry moved: %q %d", c, d)
	}
	var intents, applied []string
	for _, e := range recordtest.AuditLines(t, f.audit) {
		switch {
		case e.Entry == nil:
		case e.Phase == audit.PhaseIntent && e.Reason == "worker c1 crashed" && e.Entry.To == "idemctl-recovery" && e.OSUser == "tester":
			intents = append(intents, e.Entry.ID)
		case e.Phase == audit.PhaseOutcome && e.Outcome == write.Applied && e.Entry.Left != nil && e.Entry.Left.Deliveries == 2:
			applied = append(applied, e.Entry.ID)
		}
	}
	eq(t, "audited intents", intents, ids[0], ids[1])
	eq(t, "audited outcomes", applied, ids[0], ids[1])

	enterRun(m) // closes; re-reads
	if m.dialog != nil || m.streams.Shown().Marked != 0 || m.screen != screenStreams {
		t.Fatalf("after close: dialog %v, %d marks, screen %d", m.dialog != nil, m.streams.Shown().Marked, m.screen)
	}
	press(m, "c")
	e0 := rowFields(t, m, ids[0])
	eq(t, "re-read", []string{e0[0], e0[1], e0[3]}, ids[0], "idemctl-recovery", "2")
}

// A from an entry's view acks the entry shown: the preview says it is not
// undoable before it runs; after, the entry is not pending and the screen
// goes back to the list.
func TestStreamsAckFromEntryView(t *testing.T) {
	f := newEntryFixture(t, true)
	m, ids := f.m, f.ids
	press(m, "G")
	pressRun(m, "enter")
	if m.streams.Shown().Level != uistreams.LevelEntry || m.streams.Shown().Entry.ID != ids[3] {
		t.Fatalf("entry view of %s:\n%s", ids[3], screenText(m))
	}
	wantText(t, m, "T retry", "A ack", "D dead-letter")
	press(m, "A")
	if m.dialog == nil || len(m.dialog.labels) != 1 || len(m.dialog.entries) != 1 || m.dialog.entries[0].Entry.ID != ids[3] {
		t.Fatalf("A's form: %+v", m.dialog)
	}
	typeText(m, "job 4 is done in the ledger")
	enterRun(m)
	checkStreamsFrame(t, m)
	wantText(t, m, "ACK 1 pending entry", ids[3]+` pending to "c2" → acknowledged (XACK)`,
		"NOT undoable: an acknowledged entry leaves the pending list for good", "Type yes and enter")
	if strings.Contains(screenText(m), "undoable: u on") {
		t.Error("an ack is said undoable")
	}
	typeText(m, "yes")
	enterRun(m)
	wantText(t, m, "1 of 1 planned writes: 1 applied")
	if _, _, _, ok := f.pendingOf(t, ids[3]); ok {
		t.Fatal("the entry is still pending after the ack")
	}
	enterRun(m)
	if st := m.streams; st.Shown().Level != uistreams.LevelGroup || len(st.Shown().Entries) != 3 || !strings.Contains(m.Status, "no longer pending") {
		t.Fatalf("after the ack: level %d, %d entries, status %q", st.Shown().Level, len(st.Shown().Entries), m.Status)
	}
	checkStreamsFrame(t, m)
}

// D copies the entry once to the keyspace's dead-letter stream, with
// where it came from, and acknowledges it.
func TestStreamsDeadLetterOne(t *testing.T) {
	f := newEntryFixture(t, true)
	m, ids := f.m, f.ids
	press(m, "j", "j")
	press(m, "D")
	if m.dialog == nil || m.dialog.value("To") != "dlq:{stream}" {
		t.Fatalf("D's form: %+v", m.dialog)
	}
	typeText(m, "poison: bad payload")
	press(m, "enter")
	m.dialog.inputs[1].SetValue("")
	enterRun(m) // empty To: the keyspace's
	checkStreamsFrame(t, m)
	wantText(t, m, "DEAD-LETTER 1 pending entry", ids[2]+` pending to "c1" → acknowledged (XACK) · copied to "dlq:st:jobs"`, "NOT undoable: a dead-lettered entry")
	typeText(m, "yes")
	enterRun(m)
	wantText(t, m, "1 applied")
	msgs, err := f.c.XRange(t.Context(), "dlq:st:jobs", "-", "+").Result()
	if err != nil || len(msgs) != 1 {
		t.Fatalf("dead-letter stream: %d entries, %v", len(msgs), err)
	}
	v := msgs[0].Values
	if v["job"] != "3" || v["idemctl.id"] != ids[2] || v["idemctl.consumer"] != "c1" || v["idemctl.reason"] != "poison: bad payload" {
		t.Fatalf("the copy: %v", v)
	}
	if _, _, _, ok := f.pendingOf(t, ids[2]); ok {
		t.Fatal("the dead-lettered entry is still pending")
	}
	enterRun(m)
	if len(m.streams.Shown().Entries) != 3 {
		t.Fatalf("after the re-read %d entries", len(m.streams.Shown().Entries))
	}
}

// Between the preview and the confirmation another consumer claims one
// entry and its consumer acknowledges the other: nothing is written, and
// the tally names what happened to each.
func TestStreamsWriteConflict(t *testing.T) {
	f := newEntryFixture(t, true)
	m, ids := f.m, f.ids
	press(m, " ", " ", "T")
	typeText(m, "worker c1 crashed")
	press(m, "enter", "enter")
	enterRun(m)
	if m.dialog.step != stepConfirm || m.dialog.runnable() != 2 {
		t.Fatalf("step %v:\n%s", m.dialog.step, screenText(m))
	}
	ctx := t.Context()
	if err := f.c.Do(ctx, "xclaim", "st:jobs", "workers", "c9", 0, ids[0], "justid").Err(); err != nil {
		t.Fatal(err)
	}
	if err := f.c.XAck(ctx, "st:jobs", "workers", ids[1]).Err(); err != nil {
		t.Fatal(err)
	}
	typeText(m, "2")
	enterRun(m)
	checkStreamsFrame(t, m)
	wantText(t, m, "2 of 2 planned writes: 0 applied · 2 conflict (the entry changed since the preview)",
		"conflict st:jobs "+ids[0]+`: the entry changed since it was read: it was claimed by "c9"`,
		"conflict st:jobs "+ids[1]+": the entry changed since it was read: it was acknowledged meanwhile")
	if c, d, _, ok := f.pendingOf(t, ids[0]); !ok || c != "c9" || d != 1 {
		t.Fatalf("the claimed entry: %q %d %v", c, d, ok)
	}
	for _, r := range m.dialog.results {
		if r.Outcome != write.Conflict {
			t.Fatalf("results %+v", m.dialog.results)
		}
	}
}

// The retry's line on the Writes screen names the entry; u undoes it: the
// entry is pending to its consumer again, delivery count and idle time
// as before the retry.
func TestStreamsUndoRetryFromWritesScreen(t *testing.T) {
	f := newEntryFixture(t, true)
	m, ids := f.m, f.ids
	press(m, "T")
	typeText(m, "worker c1 crashed")
	press(m, "enter", "enter")
	enterRun(m)
	typeText(m, "yes")
	enterRun(m)
	if c, _, _, _ := f.pendingOf(t, ids[0]); c != "idemctl-recovery" {
		t.Fatalf("the retry did not apply: %q\n%s", c, screenText(m))
	}
	_, cmd := m.Update(tea.KeyPressMsg{Code: tea.KeyTab}) // to the Writes screen
	run(m, cmd)
	if m.screen != screenWrites {
		t.Fatalf("tab went to screen %d", m.screen)
	}
	wantText(t, m, "▸retry applied st:jobs "+ids[0])
	press(m, "u")
	if m.dialog == nil || m.dialog.kind != write.KindUndo {
		t.Fatalf("u did not open the undo:\n%s", screenText(m))
	}
	typeText(m, "wrong entry")
	enterRun(m)
	wantText(t, m, "consumer idemctl-recovery → c1", "deliveries 2 → 1", "Type yes")
	typeText(m, "yes")
	enterRun(m)
	wantText(t, m, "1 applied", "re-reads the streams")
	c, d, idle, ok := f.pendingOf(t, ids[0])
	if !ok || c != "c1" || d != 1 || idle < 19*time.Minute {
		t.Fatalf("after the undo: %q %d idle %v %v", c, d, idle, ok)
	}
	enterRun(m)
	if m.dialog != nil || !strings.Contains(screenText(m), "▸undo") {
		t.Fatalf("the undo is not listed:\n%s", screenText(m))
	}
}

// A read-only session: the marking and write keys write nothing and say
// how to turn writes on; the footer and the help show them off, dim.
func TestStreamsWritesReadOnly(t *testing.T) {
	f := newEntryFixture(t, false)
	m := f.m
	for _, k := range []string{" ", "a", "u", "T", "A", "D"} {
		m.Status = ""
		press(m, k)
		if m.dialog != nil || m.streams.Shown().Marked != 0 || m.Status != common.ReadOnlyHint {
			t.Fatalf("%q read-only: dialog %v, %d marks, status %q", k, m.dialog != nil, m.streams.Shown().Marked, m.Status)
		}
	}
	if c, d, _, _ := f.pendingOf(t, f.ids[0]); c != "c1" || d != 1 {
		t.Fatalf("a read-only session wrote: %q %d", c, d)
	}
	lines := strings.Split(screenText(m), "\n")
	if footer := lines[len(lines)-1]; !strings.Contains(footer, "T/A/D/space off: start with --write") {
		t.Errorf("footer: %q", footer)
	}
	press(m, "?")
	checkStreamsFrame(t, m)
	if !m.keyHelp.fits() {
		t.Fatalf("the help does not fit 80×24:\n%s", screenText(m))
	}
	wantText(t, m, "write (off)", common.ReadOnlyHint, "space mark entry", "T retry", "A ack", "D dead-letter", "r re-read")
	raw := m.View().Content
	for _, k := range []string{"T +retry", "A +ack", "D +dead-letter", "space mark entry"} {
		if !regexp.MustCompile(`\x1b\[2m` + k).MatchString(raw) {
			t.Errorf("%q is not shown disabled", k)
		}
	}
	if strings.Contains(screenText(m), "force-fail") {
		t.Error("the Streams screen's help lists the record writes")
	}
	golden(t, "help_streams_readonly_80x24", ansi.Strip(m.keyHelp.content())) // the body: the header holds the server's port

	w := newEntryFixture(t, true)
	press(w.m, "?")
	checkStreamsFrame(t, w.m)
	wantText(t, w.m, "write (guarded)", "T retry")
	if strings.Contains(screenText(w.m), common.ReadOnlyHint) || regexp.MustCompile(`\x1b\[2mT +retry`).MatchString(w.m.View().Content) {
		t.Errorf("writes on, the help says they are off:\n%s", screenText(w.m))
	}
	golden(t, "help_streams_80x24", ansi.Strip(w.m.keyHelp.content()))
	press(w.m, "q")
	if footer := strings.Split(screenText(w.m), "\n")[23]; !strings.Contains(footer, "space mark • T retry • A ack • D dead-letter") {
		t.Errorf("writes on, the footer: %q", footer)
	}
}

// On a snapshot the Streams screen neither reads nor writes: the write
// keys say pending entries live on the server, and the help says it too.
func TestStreamsWritesOnSnapshot(t *testing.T) {
	src, _, ks := seededSnapshot(t)
	sp := streams.Space{Match: "st:*"}.WithDefaults()
	m := New(t.Context(), Options{Keyspaces: []*inspect.Keyspace{ks}, Scan: inspect.Options{Snapshot: src},
		StreamSpaces: []*streams.Space{&sp}, Address: "SNAPSHOT dump.rdb", NoColor: true})
	defer m.shutdown()
	m.resize(80, 24)
	press(m, ":")
	typeText(m, "streams")
	if _, cmd := m.Update(tea.KeyPressMsg{Code: tea.KeyEnter}); cmd != nil || m.screen != screenStreams {
		t.Fatalf("a snapshot's :streams read something (screen %d)", m.screen)
	}
	for _, k := range []string{"T", "A", "D", " ", "a"} {
		m.Status = ""
		press(m, k)
		if m.dialog != nil || m.Status != common.StreamsSnapshotHint {
			t.Fatalf("%q on a snapshot: dialog %v, status %q", k, m.dialog != nil, m.Status)
		}
	}
	press(m, "?")
	checkFrame(t, m)
	wantText(t, m, "write (off)", common.StreamsSnapshotHint, "T retry")
}
