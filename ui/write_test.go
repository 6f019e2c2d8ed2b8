package ui

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/redis/go-redis/v9"

	"github.com/idemctl/idemctl/actions"
	"github.com/idemctl/idemctl/actions/audit"
	"github.com/idemctl/idemctl/actions/write"
	"github.com/idemctl/idemctl/inspect"
	snapfile "github.com/idemctl/idemctl/inspect/snapshot"
	"github.com/idemctl/idemctl/internal/appsim"
	"github.com/idemctl/idemctl/internal/testkit/recordtest"
	"github.com/idemctl/idemctl/internal/testkit/redistest"
	"github.com/idemctl/idemctl/verify"
)

func TestMain(m *testing.M) { os.Exit(redistest.RunMain(m)) }

// run executes a Cmd chain inline, as the bubbletea runtime would, until it
// settles. Ticks are never started here (no Init), so nothing blocks.
func run(m *Model, cmd tea.Cmd) {
	for cmd != nil {
		msg := cmd()
		if batch, ok := msg.(tea.BatchMsg); ok {
			for _, c := range batch {
				run(m, c)
			}
			return
		}
		if msg == nil {
			return
		}
		_, cmd = m.Update(msg)
	}
}

type liveFixture struct {
	m      *Model
	client *redis.Client
	audit  string
	ks     *inspect.Keyspace
}

// seeded is the shared server holding 300 atlasmart records written as
// the application writes them, a client, and their keyspace.
func seeded(t *testing.T) (*redistest.Server, *redis.Client, *inspect.Keyspace) {
	t.Helper()
	srv, c := redistest.SharedClient(t)
	if _, err := appsim.Seed(t.Context(), c, appsim.Plan{Schema: "atlasmart", Count: 300, ReserveTTL: time.Hour,
		ProcessingTimeout: 10 * time.Minute, Retention: time.Hour, LargeResponse: 16 << 10}); err != nil {
		t.Fatal(err)
	}
	ks := testKeyspace(t)
	ks.ReserveTTL, ks.ProcessingTimeout, ks.Retention = time.Hour, 10*time.Minute, time.Hour
	return srv, c, ks
}

// seededSnapshot is seeded's records saved to a snapshot, open for the
// test, with a client of the server that wrote it.
func seededSnapshot(t *testing.T) (*snapfile.Source, *redis.Client, *inspect.Keyspace) {
	t.Helper()
	srv, c, ks := seeded(t)
	src, err := snapfile.Open(snapfile.Spec{Path: srv.Snapshot(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { src.Close() })
	return src, c, ks
}

func newLive(t *testing.T, writes, protected bool) *liveFixture {
	t.Helper()
	srv, c, ks := seeded(t)
	ctx := t.Context()
	auditPath := recordtest.AuditPath(t)
	// The policy reaches the UI only through the executor, as from the CLI.
	ex, err := actions.NewExecutor(actions.Setup{Client: c, AuditPath: auditPath,
		Identity: audit.Identity{OSUser: "tester", Profile: "prod"},
		Policy:   &actions.Policy{Writes: writes, Protected: protected, Profile: "prod"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ex.Close() })
	m := New(ctx, Options{Client: c, Keyspaces: []*inspect.Keyspace{ks}, Profile: "prod", Address: srv.URL(0),
		NoColor: true, Executor: ex})
	m.resize(100, 30)
	run(m, m.scan.start())
	if m.scan.scanning() || m.store.recs.Len() != 300 {
		t.Fatalf("scan: %d records", m.store.recs.Len())
	}
	return &liveFixture{m: m, client: c, audit: auditPath, ks: ks}
}

// The path from the keyboard: filter stale records, mark several,
// force-fail them with a reason through the confirmation, see the outcome
// in the table and the writes screen.
func TestForceFailStaleFromKeyboard(t *testing.T) {
	f := newLive(t, true, false)
	m := f.m
	press(m, "x")
	stale := len(m.store.view)
	if stale != 24 {
		t.Fatalf("%d stale records, want 24", stale)
	}
	var keys []string
	for i := 0; i < 3; i++ {
		keys = append(keys, m.store.at(i).Key)
		m.Update(tea.KeyPressMsg{Code: tea.KeySpace, Text: " "})
	}
	if len(m.records.marks) != 3 || !strings.Contains(screenText(m), "3 marked") {
		t.Fatalf("marks: %v", m.records.marks)
	}
	press(m, "F")
	if m.dialog == nil {
		t.Fatal("F did not open the dialog")
	}
	press(m, "enter") // empty reason
	press(m, "enter")
	if !strings.Contains(screenText(m), "reason is required") {
		t.Fatalf("empty reason accepted:\n%s", screenText(m))
	}
	m.dialog.focus = 0
	m.dialog.focusInput()
	typeText(m, "worker crashed; order absent in DB")
	press(m, "enter") // to the TTL field
	_, cmd := m.Update(tea.KeyPressMsg{Code: tea.KeyEnter})
	run(m, cmd)
	text := screenText(m)
	for _, want := range []string{"PROCESSING → FAILED", "(none) → 503", "Type 3 and enter"} {
		if !strings.Contains(text, want) {
			t.Fatalf("confirmation lacks %q:\n%s", want, text)
		}
	}
	typeText(m, "2") // the wrong count
	press(m, "enter")
	if m.dialog.step != stepConfirm || !strings.Contains(screenText(m), "type 3 to confirm") {
		t.Fatalf("wrong count accepted: step %v", m.dialog.step)
	}
	m.dialog.confirm.SetValue("")
	typeText(m, "3")
	_, cmd = m.Update(tea.KeyPressMsg{Code: tea.KeyEnter})
	run(m, cmd)
	if m.dialog.step != stepDone || !strings.Contains(screenText(m), "3 applied") {
		t.Fatalf("run did not finish: step %v\n%s", m.dialog.step, screenText(m))
	}
	for _, k := range keys {
		vals, _ := f.client.HMGet(t.Context(), k, "state", "status", "reason", "failed_by").Result()
		if vals[0] != "FAILED" || vals[1] != "503" || vals[2] != "worker crashed; order absent in DB" || vals[3] != "tester" {
			t.Fatalf("%s after force-fail: %v", k, vals)
		}
	}
	_, cmd = m.Update(tea.KeyPressMsg{Code: tea.KeyEnter}) // close: rescans
	run(m, cmd)
	if m.dialog != nil || len(m.records.marks) != 0 {
		t.Fatal("dialog still open after enter")
	}
	press(m, "x", "/")
	typeText(m, "state=failed")
	press(m, "enter")
	if len(m.store.view) != 3 {
		t.Fatalf("table shows %d failed records after the rescan, want 3", len(m.store.view))
	}
	press(m, "tab", "tab")
	if m.screen != screenWrites || strings.Count(screenText(m), "fail      applied") != 3 {
		t.Fatalf("writes screen:\n%s", screenText(m))
	}
	entries := recordtest.AuditLines(t, f.audit)
	if len(entries) != 7 || entries[0].Phase != audit.PhasePlan || entries[0].Planned != 3 {
		t.Fatalf("audit has %d lines, want the run's plan, then an intent and an outcome per write (7)", len(entries))
	}
}

// The application completes a record after the operator saw it: the write
// is a conflict and changes nothing.
func TestWriteConflictsWithApplication(t *testing.T) {
	f := newLive(t, true, false)
	m := f.m
	press(m, "x")
	r := *m.store.at(0)
	press(m, "R")
	typeText(m, "ORD-1")
	press(m, "enter")
	typeText(m, "payment captured per PSP dashboard")
	press(m, "enter")
	_, cmd := m.Update(tea.KeyPressMsg{Code: tea.KeyEnter})
	run(m, cmd)
	if n, err := appsim.Complete.Run(t.Context(), f.client, []string{r.Key}, r.Fingerprint, 201, `{"order_id":"ORD-1"}`, 300).Int(); err != nil || n != 1 {
		t.Fatalf("application complete: %d %v", n, err)
	}
	typeText(m, "yes")
	_, cmd = m.Update(tea.KeyPressMsg{Code: tea.KeyEnter})
	run(m, cmd)
	if got := m.dialog.results[0].Outcome; got != write.Conflict {
		t.Fatalf("outcome %s, want conflict", got)
	}
	vals, _ := f.client.HMGet(t.Context(), r.Key, "state", "status", "reconciled_ref").Result()
	if vals[0] != "SUCCEEDED" || vals[1] != "201" || vals[2] != nil {
		t.Fatalf("the application's write was not kept: %v", vals)
	}
}

func TestReadOnlyAndProtected(t *testing.T) {
	f := newLive(t, false, false)
	press(f.m, "x", "F")
	if f.m.dialog != nil || !strings.Contains(f.m.Status, "read-only") {
		t.Fatalf("read-only UI opened a write dialog; status %q", f.m.Status)
	}
	p := newLive(t, true, true)
	m := p.m
	press(m, "x", "E")
	if m.dialog == nil || m.dialog.step != stepProfile {
		t.Fatal("a protected profile must ask for its name first")
	}
	typeText(m, "production")
	press(m, "enter")
	if m.dialog.step != stepProfile || !strings.Contains(screenText(m), "not the profile's name") {
		t.Fatal("a wrong profile name was accepted")
	}
	m.dialog.confirm.SetValue("")
	typeText(m, "prod")
	press(m, "enter")
	if m.dialog.step != stepForm {
		t.Fatalf("step %v after the right name", m.dialog.step)
	}
	press(m, "esc")
	press(m, "E") // once per session
	if m.dialog.step != stepForm {
		t.Fatal("asked for the profile name twice in one session")
	}
}

// Bug 7: the detail screen's advice (force-fail or reconcile) works there:
// F opens the write on the record shown, confirmed with yes as at the CLI,
// and the detail shows the record as written.
func TestForceFailFromDetail(t *testing.T) {
	f := newLive(t, true, false)
	m := f.m
	press(m, "x")
	m.Update(tea.KeyPressMsg{Code: tea.KeySpace, Text: " "}) // a mark the detail's write must leave alone
	_, cmd := m.Update(tea.KeyPressMsg{Code: tea.KeyEnter})
	run(m, cmd)
	if m.screen != screenDetail || m.detail.cur.d == nil {
		t.Fatal("enter did not open and fetch the record")
	}
	key := m.detail.cur.key
	if !strings.Contains(screenText(m), "F force-fail") {
		t.Fatalf("the detail's footer does not offer F:\n%s", screenText(m))
	}
	press(m, "F")
	if m.dialog == nil || len(m.dialog.targets) != 1 || m.dialog.targets[0].Key != key {
		t.Fatalf("F on the detail screen: dialog %+v", m.dialog)
	}
	typeText(m, "worker crashed; order absent in DB")
	press(m, "enter")
	_, cmd = m.Update(tea.KeyPressMsg{Code: tea.KeyEnter})
	run(m, cmd)
	if !strings.Contains(screenText(m), "Type yes and enter") {
		t.Fatalf("confirmation:\n%s", screenText(m))
	}
	typeText(m, "y") // not the CLI's word
	press(m, "enter")
	if m.dialog.step != stepConfirm || !strings.Contains(m.dialog.errText, "type yes to confirm") {
		t.Fatalf("y accepted: step %v %q", m.dialog.step, m.dialog.errText)
	}
	m.dialog.confirm.SetValue("")
	typeText(m, "yes")
	_, cmd = m.Update(tea.KeyPressMsg{Code: tea.KeyEnter})
	run(m, cmd)
	if m.dialog.step != stepDone || m.dialog.results[0].Outcome != write.Applied {
		t.Fatalf("force-fail from the detail: step %v %+v", m.dialog.step, m.dialog.results)
	}
	_, cmd = m.Update(tea.KeyPressMsg{Code: tea.KeyEnter})
	run(m, cmd)
	if m.screen != screenDetail || m.detail.cur.d == nil || m.detail.cur.d.Record.State != inspect.StateFailed {
		t.Fatalf("after the write the detail shows %v", m.detail.cur.d.Record.State)
	}
	if !strings.Contains(screenText(m), "failed") {
		t.Fatalf("detail after the write:\n%s", screenText(m))
	}
	if len(m.records.marks) != 1 {
		t.Fatalf("the detail's write cleared the marks: %v", m.records.marks)
	}
}

// V on marked stale records: the keyspace's hook is asked about each, the
// dialog lists every VERDICT with what the plan does, one confirmation
// with the count applies the plan (done → reconcile with the hook's ref,
// not_done → fail), and a hook that prints garbage leaves its record alone.
func TestTriageFromKeyboard(t *testing.T) {
	ro := newLive(t, false, false)
	ro.m.Opts.Hooks = map[string]*verify.Hook{ro.ks.Name: {Command: []string{"/bin/false"}}}
	press(ro.m, "x", "V")
	if ro.m.dialog != nil || !strings.Contains(ro.m.Status, "read-only") {
		t.Fatalf("a read-only session ran the hooks; status %q", ro.m.Status)
	}
	f := newLive(t, true, false)
	m := f.m
	script := `case "$1" in
*[02468]) printf '{"verdict":"done","ref":"ord-%s","detail":"order found"}' "$1" ;;
*5) echo 'Order found!' ;;
*) echo '{"verdict":"not_done","detail":"no order"}' ;;
esac`
	m.Opts.Hooks = map[string]*verify.Hook{f.ks.Name: {Command: []string{"/bin/sh", "-c", script, "hook", "{key}"}, Timeout: 5 * time.Second}}
	press(m, "x")
	var recs []inspect.Record
	for range 8 {
		recs = append(recs, *m.store.at(m.records.cursor))
		m.Update(tea.KeyPressMsg{Code: tea.KeySpace, Text: " "})
	}
	want := map[string]string{} // key → state after
	runnable, garbage := 0, 0
	for _, r := range recs {
		switch last := r.Key[len(r.Key)-1]; {
		case strings.ContainsRune("02468", rune(last)):
			want[r.Key], runnable = "SUCCEEDED", runnable+1
		case last == '5':
			want[r.Key], garbage = "PROCESSING", garbage+1
		default:
			want[r.Key], runnable = "FAILED", runnable+1
		}
	}
	_, cmd := m.Update(tea.KeyPressMsg{Code: 'V', Text: "V"})
	if m.dialog == nil || m.dialog.kind != kindTriage {
		t.Fatal("V did not open the triage dialog")
	}
	run(m, cmd)
	text := screenText(m)
	if m.dialog.step != stepConfirm || !strings.Contains(text, "VERDICT") || !strings.Contains(text, confirmWord(runnable)) {
		t.Fatalf("no verdicts to confirm (step %v):\n%s", m.dialog.step, text)
	}
	if garbage > 0 && !strings.Contains(text, "unknown   left alone") {
		t.Fatalf("the garbage hook's reason is not shown:\n%s", text)
	}
	typeText(m, confirmWord(runnable))
	_, cmd = m.Update(tea.KeyPressMsg{Code: tea.KeyEnter})
	run(m, cmd)
	if m.dialog.step != stepDone || !strings.Contains(screenText(m), fmt.Sprintf("%d applied", runnable)) {
		t.Fatalf("run did not finish: step %v\n%s", m.dialog.step, screenText(m))
	}
	for _, r := range recs {
		vals, _ := f.client.HMGet(t.Context(), r.Key, "state", "reconciled_ref").Result()
		if vals[0] != want[r.Key] {
			t.Fatalf("%s: state %v, want %s", r.Key, vals[0], want[r.Key])
		}
		if want[r.Key] == "SUCCEEDED" && vals[1] != "ord-"+r.Key {
			t.Fatalf("%s reconciled with ref %v", r.Key, vals[1])
		}
	}
	for _, e := range recordtest.AuditLines(t, f.audit) {
		if e.Phase == audit.PhaseIntent && (e.Evidence == nil || e.Evidence.Hook != "sh") {
			t.Fatalf("intent without the hook's evidence: %+v", e)
		}
	}
}

// u on the Writes screen undoes the selected write through the same dialog
// and executor: the record is back byte for byte (DUMP), and the undo is
// listed as a write of its own. In a read-only session u only says why.
func TestUndoFromWritesScreen(t *testing.T) {
	f := newLive(t, true, false)
	m := f.m
	ctx := t.Context()
	press(m, "x")
	key := m.store.at(0).Key
	before := f.client.Dump(ctx, key).Val()
	press(m, "F")
	typeText(m, "worker crashed")
	press(m, "enter")
	_, cmd := m.Update(tea.KeyPressMsg{Code: tea.KeyEnter})
	run(m, cmd)
	typeText(m, "yes")
	_, cmd = m.Update(tea.KeyPressMsg{Code: tea.KeyEnter})
	run(m, cmd)
	if f.client.Dump(ctx, key).Val() == before {
		t.Fatal("the force-fail changed nothing")
	}
	_, cmd = m.Update(tea.KeyPressMsg{Code: tea.KeyEnter}) // close: rescans
	run(m, cmd)
	press(m, "tab", "tab")
	if m.screen != screenWrites || !strings.Contains(screenText(m), "▸fail") {
		t.Fatalf("writes screen without the write selected:\n%s", screenText(m))
	}
	press(m, "u")
	if m.dialog == nil || m.dialog.kind != write.KindUndo {
		t.Fatalf("u did not open the undo dialog:\n%s", screenText(m))
	}
	typeText(m, "wrong record")
	_, cmd = m.Update(tea.KeyPressMsg{Code: tea.KeyEnter})
	run(m, cmd)
	text := screenText(m)
	for _, want := range []string{"FAILED → PROCESSING", "will not be undoable: values left out", "Type yes"} {
		if !strings.Contains(text, want) {
			t.Fatalf("undo confirmation lacks %q:\n%s", want, text)
		}
	}
	typeText(m, "yes")
	_, cmd = m.Update(tea.KeyPressMsg{Code: tea.KeyEnter})
	run(m, cmd)
	if m.dialog.step != stepDone || !strings.Contains(screenText(m), "1 applied") {
		t.Fatalf("undo did not apply:\n%s", screenText(m))
	}
	if f.client.Dump(ctx, key).Val() != before {
		t.Fatal("the undo did not restore the record byte for byte")
	}
	m.dialog = nil
	press(m, "j", "g") // back to the newest: the title shows again
	if !strings.Contains(screenText(m), "▸undo") || !strings.Contains(screenText(m), "WRITES THIS SESSION") {
		t.Fatalf("the undo is not listed (and selected) on the Writes screen:\n%s", screenText(m))
	}

	ro := newLive(t, false, false)
	press(ro.m, "tab", "tab", "u")
	if ro.m.screen != screenWrites || ro.m.dialog != nil || !strings.Contains(ro.m.Status, "read-only") {
		t.Fatalf("u in a read-only session: screen %v, dialog %v, status %q", ro.m.screen, ro.m.dialog != nil, ro.m.Status)
	}
}
