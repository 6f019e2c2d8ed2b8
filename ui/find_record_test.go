package ui

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/idemctl/idemctl/actions"
	"github.com/idemctl/idemctl/actions/audit"
	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/internal/appsim"
	"github.com/idemctl/idemctl/internal/testkit/recordtest"
	"github.com/idemctl/idemctl/internal/testkit/redistest"
)

const findKey = "atlasmart:ch23:idem:customer-42:POST:/orders:req-2026-0001"

// runFind types :find LINE and runs what it starts.
func runFind(m *Model, line string) {
	press(m, ":")
	typeText(m, "find "+line)
	_, cmd := m.Update(tea.KeyPressMsg{Code: tea.KeyEnter})
	run(m, cmd)
}

func requestFile(t *testing.T, name, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	req := `{"method":"POST","path":"/orders","headers":{"Idempotency-Key":"req-2026-0001"},"body":` + body + `}`
	if err := os.WriteFile(p, []byte(req), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// :find takes what 'idemctl find' takes: the key and its captures, or a
// request file; the record opens on Detail with the verdict, and the
// write keys apply to it there. Not found, or inputs the library cannot
// key from, are said in one line.
func TestFindOpensTheRecordWithItsVerdict(t *testing.T) {
	srv, c := redistest.OwnClient(t)
	ctx := t.Context()
	fp := appsim.Fingerprint(`{"qty":1,"sku":"sku-42"}`)
	if err := appsim.Reserve.Run(ctx, c, []string{findKey}, fp, 3600).Err(); err != nil {
		t.Fatal(err)
	}
	ks := testKeyspace(t)
	ks.ReserveTTL, ks.ProcessingTimeout, ks.Retention = 2*time.Hour, time.Minute, time.Hour
	ex, err := actions.NewExecutor(actions.Setup{Client: c, AuditPath: recordtest.AuditPath(t),
		Identity: audit.Identity{OSUser: "tester", Profile: "prod"}, Policy: &actions.Policy{Writes: true, Profile: "prod"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ex.Close() })
	m := New(ctx, Options{Client: c, Keyspaces: []*inspect.Keyspace{ks}, Profile: "prod", Address: srv.URL(0), NoColor: true, Executor: ex})
	m.resize(120, 30)

	runFind(m, "req-2026-0001 --principal customer-42 --method POST --path /orders")
	if m.screen != screenDetail || m.detail.cur == nil || m.detail.cur.key != findKey {
		t.Fatalf(":find by key did not open %s: screen %v, status %q", findKey, m.screen, m.Status)
	}
	text := screenText(m)
	for _, want := range []string{"FOUND BY", "as atlasmart keys it", "no request body was given to compare", "STALE"} {
		if !strings.Contains(text, want) {
			t.Errorf("detail after :find lacks %q:\n%s", want, text)
		}
	}
	press(m, "F")
	if m.dialog == nil || len(m.dialog.targets) != 1 || m.dialog.targets[0].Key != findKey {
		t.Fatalf("F on the found record: dialog %+v", m.dialog)
	}
	press(m, "esc")
	m.dialog = nil
	press(m, "esc")

	cases := []struct{ line, want string }{
		{requestFile(t, "same.json", `{"sku":"sku-42","qty":1}`) + " --principal customer-42", "same request"},
		{"--request " + requestFile(t, "changed.json", `{"sku":"sku-42","qty":2}`) + " principal=customer-42", "different request under this key: the library answers CONFLICT"},
	}
	for _, c := range cases {
		runFind(m, c.line)
		if m.screen != screenDetail || !strings.Contains(screenText(m), c.want) {
			t.Errorf(":find %s: screen %v, status %q, want %q:\n%s", c.line, m.screen, m.Status, c.want, screenText(m))
		}
		press(m, "esc")
	}

	for _, c := range []struct{ line, want string }{
		{requestFile(t, "other.json", `{"sku":"sku-42","qty":1}`) + " --principal customer-7", "not found: never stored, or expired (retention 1h00m)"},
		{"req-2026-0001", "give --method and --path (or --request), --principal"},
		{"--keyspace nope k", "no keyspace nope in this session"},
		{"--bogus", "unknown flag: --bogus"},
		{"", "usage: :find KEY|FILE"},
	} {
		runFind(m, c.line)
		if m.screen == screenDetail || !strings.Contains(m.Status, c.want) {
			t.Errorf(":find %s: screen %v, status %q, want %q", c.line, m.screen, m.Status, c.want)
		}
	}
}
