package ui

import (
	"errors"
	"regexp"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/redis/go-redis/v9"

	"github.com/idemctl/idemctl/actions"
	"github.com/idemctl/idemctl/actions/audit"
	"github.com/idemctl/idemctl/actions/write"
	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/internal/appsim"
	"github.com/idemctl/idemctl/internal/testkit/recordtest"
	"github.com/idemctl/idemctl/internal/testkit/redistest"
	"github.com/idemctl/idemctl/ui/common"
)

// allWriteHelp is every write key as the help lists it, V and undo too.
var allWriteHelp = []string{"space mark record", "a mark all in view", "u unmark all", "E expire / delete",
	"F force-fail", "R mark reconciled", "V verify & triage", "u undo write (Writes)"}

// Issue 29: at 80×24 a read-only session's help still lists every write
// key, dim, with the line that says how to turn writes on, and all of it
// fits: no scrolling, no line cut.
func TestReadOnlyHelpAt80x24(t *testing.T) {
	m := newTestModel(t, 80, 24, fixture(testKeyspace(t), 30))
	press(m, "?")
	checkFrame(t, m)
	if !m.keyHelp.fits() {
		t.Fatalf("the read-only help does not fit 80×24:\n%s", m.keyHelp.content())
	}
	body := strings.Split(ansi.Strip(m.keyHelp.content()), "\n")
	if len(body) > m.bodyHeight() {
		t.Fatalf("help is %d lines, the body %d", len(body), m.bodyHeight())
	}
	for _, l := range body {
		if ansi.StringWidth(l) > 80 {
			t.Fatalf("help line wider than 80: %q", l)
		}
	}
	text := screenText(m)
	flat := strings.Join(strings.Fields(text), " ")
	for _, want := range append([]string{"write (off)", "state=processing · flag=stuck · stale", "(any key closes)"}, allWriteHelp...) {
		if !strings.Contains(flat, want) {
			t.Errorf("read-only help at 80×24 lacks %q:\n%s", want, text)
		}
	}
	if !strings.Contains(text, common.ReadOnlyHint) { // whole, on one line
		t.Errorf("the help does not say how to turn writes on in one line:\n%s", text)
	}
	// Disabled, the whole row is dim; enabled, only the description.
	raw := m.View().Content
	for _, k := range []string{"F +force-fail", "E +expire / delete", "space mark record", "V verify & triage"} {
		if !regexp.MustCompile(`\x1b\[2m` + k).MatchString(raw) {
			t.Errorf("%q is not shown disabled", k)
		}
	}
	if !regexp.MustCompile(`r \x1b\[2mrescan`).MatchString(raw) {
		t.Error("an enabled key is shown dim")
	}
	if footer := strings.Split(text, "\n")[23]; !strings.Contains(footer, "F/R/E/space off: start with --write") {
		t.Errorf("the footer does not name the write keys off: %q", footer)
	}
	// The key does what the help says: the same hint, whole at 80 columns.
	press(m, "q", "F")
	if status := strings.Split(screenText(m), "\n")[22]; !strings.Contains(status, common.ReadOnlyHint) {
		t.Errorf("F read-only: %q", status)
	}

	// With writes on, the same places hold the keys, enabled, and no hint.
	w := newTestModelWith(t, 80, 24, fixture(testKeyspace(t), 30), executor(t, true))
	press(w, "?")
	text = screenText(w)
	if strings.Contains(text, "write (off)") || strings.Contains(text, common.ReadOnlyHint) ||
		regexp.MustCompile(`\x1b\[2mF +force-fail`).MatchString(w.View().Content) {
		t.Fatalf("writes on, the help says they are off:\n%s", text)
	}

	// Detail screen: the footer names its write keys off.
	press(m, "enter")
	if m.screen != screenDetail {
		t.Fatalf("screen %v", m.screen)
	}
	if footer := strings.Split(screenText(m), "\n")[23]; !strings.Contains(footer, "F/R/E off: start with --write") {
		t.Errorf("the detail footer does not name the write keys off: %q", footer)
	}
}

// On a snapshot the help lists the write keys off with the snapshot's
// reason (write on the live server), not the --write hint.
func TestSnapshotHelpSaysWhereToWrite(t *testing.T) {
	src, _, ks := seededSnapshot(t)
	m := New(t.Context(), Options{Keyspaces: []*inspect.Keyspace{ks}, Scan: inspect.Options{Snapshot: src},
		Address: "SNAPSHOT dump.rdb", NoColor: true})
	defer m.shutdown()
	m.resize(120, 30)
	run(m, m.scan.start())
	lines := strings.Split(screenText(m), "\n")
	if footer := lines[len(lines)-1]; !strings.Contains(footer, "F/R/E off: a snapshot (Y copies)") {
		t.Fatalf("snapshot footer: %q", footer)
	}
	press(m, "?")
	checkFrame(t, m)
	text := screenText(m)
	flat := strings.Join(strings.Fields(text), " ")
	for _, want := range append([]string{"write (off)", common.SnapshotHint}, allWriteHelp...) {
		if !strings.Contains(flat, want) {
			t.Errorf("snapshot help lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(flat, "--write") {
		t.Errorf("a snapshot's help says --write:\n%s", text)
	}
}

// aclLive is newLive as the Redis user name, created with rights on the
// shared server: the scan, the plans and the writes all go as that user.
func aclLive(t *testing.T, name string, rights ...string) *liveFixture {
	t.Helper()
	srv, admin, ks := seeded(t)
	ctx := t.Context()
	redistest.ACLUser(t, admin, name, append([]string{"reset", "on", ">pw-" + name, "~*", "resetchannels"}, rights...)...)
	c := redis.NewClient(&redis.Options{Addr: srv.Addr, Username: name, Password: "pw-" + name, DisableIdentity: true})
	t.Cleanup(func() { c.Close() })
	auditPath := recordtest.AuditPath(t)
	ex, err := actions.NewExecutor(actions.Setup{Client: c, AuditPath: auditPath,
		Identity: audit.Identity{OSUser: "tester", RedisUser: name, Profile: "prod"},
		Policy:   &actions.Policy{Writes: true, Profile: "prod"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ex.Close() })
	m := New(ctx, Options{Client: c, Keyspaces: []*inspect.Keyspace{ks}, Profile: "prod", Address: srv.URL(0),
		User: name, NoColor: true, Executor: ex})
	m.resize(120, 30)
	run(m, m.scan.start())
	if m.scan.scanning() || m.store.recs.Len() != 300 {
		t.Fatalf("scan as %s: %d records (%s)", name, m.store.recs.Len(), m.scan.banner)
	}
	return &liveFixture{m: m, client: admin, audit: auditPath, ks: ks}
}

// forceFailMarked marks the first n stale records and force-fails them
// from the keyboard through the confirmation, returning the targets in
// the order of the plans and results; between runs after the preview,
// before the writes.
func forceFailMarked(t *testing.T, m *Model, n int, between func(targets []inspect.Record)) []inspect.Record {
	t.Helper()
	press(m, "x")
	for range n {
		m.Update(spaceKey)
	}
	press(m, "F")
	if m.dialog == nil {
		t.Fatalf("F opened no dialog: %q", m.Status)
	}
	typeText(m, "worker crashed; order absent in DB")
	press(m, "enter")
	_, cmd := m.Update(tea.KeyPressMsg{Code: tea.KeyEnter})
	run(m, cmd)
	if m.dialog.step != stepConfirm || m.dialog.runnable() != n {
		t.Fatalf("preview: step %v, %d runnable\n%s", m.dialog.step, m.dialog.runnable(), screenText(m))
	}
	if between != nil {
		between(m.dialog.targets)
	}
	typeText(m, confirmWord(n))
	_, cmd = m.Update(tea.KeyPressMsg{Code: tea.KeyEnter})
	run(m, cmd)
	if m.dialog.step != stepDone {
		t.Fatalf("run did not finish: step %v\n%s", m.dialog.step, screenText(m))
	}
	return m.dialog.targets
}

const aclCause = "NOPERM: the server's ACL does not let this Redis user write"

// Issue 29: a TUI write by an ACL user who may not run the write scripts,
// or whose scripts may not run the commands they call, is summarised as
// the server's permission refusal, never as "the record changed".
func TestRefusalNamesNOPERM(t *testing.T) {
	for _, c := range []struct {
		name   string
		rights []string
	}{
		{"idem-noeval", []string{"+@all", "-eval", "-evalsha", "-eval_ro", "-evalsha_ro"}},   // the scripts refused
		{"idem-nowrite", []string{"+@all", "-hset", "-set", "-del", "-pexpire", "-persist"}}, // their calls refused
	} {
		t.Run(c.name, func(t *testing.T) {
			f := aclLive(t, c.name, c.rights...)
			m := f.m
			recs := forceFailMarked(t, m, 2, nil)
			for _, r := range m.dialog.results {
				if r.Outcome != write.Refused {
					t.Fatalf("%s: %s %q", r.Key, r.Outcome, r.Detail)
				}
			}
			got := m.dialog.tally().String(true)
			if want := "2 of 2 planned writes: 0 applied · 2 refused (" + aclCause + ")"; got != want {
				t.Errorf("summary\n%s\nwant\n%s", got, want)
			}
			text := screenText(m)
			flat := strings.Join(strings.Fields(text), " ")
			if strings.Contains(flat, "changed since the preview") || !strings.Contains(flat, aclCause) ||
				!strings.Contains(flat, "the ACL user") { // the notes under it: the server's words and the rights it needs
				t.Errorf("dialog:\n%s", text)
			}
			for _, r := range recs {
				if st, _ := f.client.HGet(t.Context(), r.Key, "state").Result(); st != "PROCESSING" {
					t.Errorf("%s is %q after a refused write", r.Key, st)
				}
			}
		})
	}
}

// Issue 29: a run whose writes failed for different reasons gives one
// line per cause, each with its count, and the counts add up: here the
// application completed one record after the preview and another was
// deleted (one cause: the record changed), the ACL was narrowed so a third
// may not be written (NOPERM), and the fourth applied.
func TestMixedCausesOneLinePerCause(t *testing.T) {
	f := aclLive(t, "idem-partial", "+@all")
	m := f.m
	recs := forceFailMarked(t, m, 4, func(recs []inspect.Record) {
		ctx := t.Context()
		if n, err := appsim.Complete.Run(ctx, f.client, []string{recs[0].Key}, recs[0].Fingerprint, 201, `{"order_id":"ORD-1"}`, 300).Int(); err != nil || n != 1 {
			t.Fatalf("application complete: %d %v", n, err)
		}
		if err := f.client.Del(ctx, recs[1].Key).Err(); err != nil {
			t.Fatal(err)
		}
		// every key readable, all but the third writable
		if err := f.client.Do(ctx, "ACL", "SETUSER", "idem-partial", "resetkeys", "%R~*",
			"~"+recs[0].Key, "~"+recs[1].Key, "~"+recs[3].Key).Err(); err != nil {
			t.Fatal(err)
		}
	})
	byKey := map[string]write.Outcome{}
	for _, r := range m.dialog.results {
		byKey[r.Key] = r.Outcome
	}
	if byKey[recs[0].Key] != write.Conflict || byKey[recs[1].Key] != write.NotFound ||
		byKey[recs[2].Key] != write.Refused || byKey[recs[3].Key] != write.Applied {
		t.Fatalf("outcomes %v", m.dialog.results)
	}
	got := m.dialog.tally().String(true)
	want := "4 of 4 planned writes: 1 applied · 3 did not apply\n" +
		"  · 1 conflict, 1 not_found (the record changed since the preview)\n" +
		"  · 1 refused (" + aclCause + ")"
	if got != want {
		t.Errorf("summary\n%s\nwant\n%s", got, want)
	}
	checkFrame(t, m)
	text := screenText(m)
	for _, l := range strings.Split(want, "\n") {
		if !strings.Contains(text, l) {
			t.Errorf("the dialog lacks the line %q:\n%s", l, text)
		}
	}
}

// Every cause of the table is one line of its own, worded from the
// executor's real details; a result no row knows is counted by its
// outcome; the not attempted say why they were not.
func TestRunTallyCauses(t *testing.T) {
	res := func(o write.Outcome, detail string) actions.Result {
		return actions.Result{Outcome: o, Detail: detail}
	}
	cases := []struct {
		r   actions.Result
		why string
	}{
		{res(write.Conflict, "the record changed since it was read: state is now \"SUCCEEDED\"; nothing was written"), "the record changed since the preview"},
		{res(write.NotFound, "the key no longer exists"), "the record changed since the preview"},
		{res(write.Refused, "NOPERM this user has no permissions to run the 'evalsha' command — the ACL user \"x\" may not run the write scripts"), aclCause},
		{res(write.Refused, "the record's version could not be read, so the write cannot be guarded: NOPERM this user has no permissions to run the 'eval' command"), aclCause},
		{res(write.Refused, "ERR The user executing the script can't run this command or subcommand script: …"), aclCause},
		{res(write.Refused, actions.ErrNeedsProfileName.Error()), "refused by policy"},
		{res(write.Refused, actions.ErrReadOnly.Error()), "refused by policy"},
		{res(write.Refused, "not written: "+errors.New("write audit.log: no space left on device").Error()), "the audit log could not be written"},
		{res(write.Refused, "the record's version could not be read, so the write cannot be guarded: LOADING"), "the record's version could not be read, so the write could not be guarded"},
		{res(write.Failed, "OOM command not allowed — Redis is at maxmemory and refuses writes; nothing was written"), "a server error"},
		{res(write.NotApplied, "uncertain (i/o timeout); a re-read shows the record unchanged: the write did not happen"), "uncertain, and a re-read shows it did not happen"},
		{res(write.Unknown, "uncertain (i/o timeout); the record could not be re-read: check it by hand"), "uncertain: check the record by hand"},
	}
	d := &dialog{}
	for _, c := range cases {
		// one cause alone: one clause on the first line
		one := &dialog{plans: []*actions.Plan{{}}, results: []actions.Result{c.r}, done: 1}
		want := "1 of 1 planned writes: 0 applied · 1 " + string(c.r.Outcome) + " (" + c.why + ")"
		if got := one.tally().String(true); got != want {
			t.Errorf("%s %q:\n%s\nwant\n%s", c.r.Outcome, c.r.Detail, got, want)
		}
		d.plans, d.results = append(d.plans, &actions.Plan{}), append(d.results, c.r)
	}
	// all together, with one applied, one no row knows, two cancelled
	d.plans = append(d.plans, &actions.Plan{}, &actions.Plan{}, &actions.Plan{}, &actions.Plan{})
	d.results = append(d.results, res(write.Applied, ""), res(write.Refused, "the key's type (string) does not match the schema"),
		res(write.Skipped, "cancelled before this write"), res(write.Skipped, "cancelled before this write"))
	d.done = len(d.plans)
	got := d.tally().String(true)
	want := strings.Join([]string{
		"14 of 16 planned writes: 1 applied · 13 did not apply · 2 not attempted: cancelled",
		"  · 1 conflict, 1 not_found (the record changed since the preview)",
		"  · 3 refused (" + aclCause + ")",
		"  · 2 refused (refused by policy)",
		"  · 1 refused (the audit log could not be written)",
		"  · 1 refused (the record's version could not be read, so the write could not be guarded)",
		"  · 1 error (a server error)",
		"  · 1 not_applied (uncertain, and a re-read shows it did not happen)",
		"  · 1 unknown (uncertain: check the record by hand)",
		"  · 1 refused",
	}, "\n")
	if got != want {
		t.Errorf("mixed summary\n%s\nwant\n%s", got, want)
	}
	// A run the audit log stopped was not cancelled.
	stopped := &dialog{plans: []*actions.Plan{{}, {}}, done: 2, results: []actions.Result{res(write.Applied, ""),
		res(write.Skipped, "not written: the run stopped: write audit.log: no space left on device")}}
	if got, want := stopped.tally().String(true), "1 of 2 planned writes: 1 applied · 1 not attempted: the run stopped (the audit log could not be written)"; got != want {
		t.Errorf("stopped run\n%s\nwant\n%s", got, want)
	}
}
