package ui

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/internal/appsim"
	"github.com/idemctl/idemctl/internal/testkit/inspecttest"
	"github.com/idemctl/idemctl/internal/testkit/redistest"
)

// :db and :keyspace read another source without restarting; nothing of the
// previous one stays on screen, and a session that can write refuses :db.
func TestSwitchDatabaseAndKeyspace(t *testing.T) {
	srv := redistest.Shared(t)
	ctx := t.Context()
	for db, plan := range map[int]appsim.Plan{
		0: {Schema: "atlasmart", Count: 120, ReserveTTL: time.Hour, ProcessingTimeout: 10 * time.Minute, Retention: time.Hour},
		5: {Schema: "atlasmart", Count: 40, ReserveTTL: time.Hour, ProcessingTimeout: 10 * time.Minute, Retention: time.Hour},
	} {
		c := srv.Client(db)
		if _, err := appsim.Seed(ctx, c, plan); err != nil {
			t.Fatal(err)
		}
		c.Close()
	}
	setnx := srv.Client(0)
	defer setnx.Close()
	for i := range 7 {
		setnx.Set(ctx, "idempotency:order:sw-"+string(rune('a'+i)), "processing", time.Hour)
	}
	c := srv.Client(0)
	defer c.Close()
	atlas, marker := testKeyspace(t), inspecttest.Keyspace(t, "setnx")
	m := New(ctx, Options{Client: c, Keyspaces: []*inspect.Keyspace{atlas, marker}, Address: srv.URL(0), NoColor: true})
	defer m.shutdown()
	m.resize(100, 30)
	run(m, m.scan.start())
	if n := m.store.recs.Len(); n != 127 {
		t.Fatalf("first scan: %d records", n)
	}
	command := func(line string) {
		press(m, ":")
		typeText(m, line)
		_, cmd := m.Update(tea.KeyPressMsg{Code: tea.KeyEnter})
		run(m, cmd)
	}
	command("keyspace " + atlas.Name)
	if n := m.store.recs.Len(); n != 120 || len(m.Opts.Keyspaces) != 1 {
		t.Fatalf(":keyspace: %d records, %d keyspaces", n, len(m.Opts.Keyspaces))
	}
	command("db 5")
	if n := m.store.recs.Len(); n != 40 || !strings.Contains(screenText(m), srv.Addr+"/5") {
		t.Fatalf(":db 5: %d records\n%s", n, screenText(m))
	}
	command("keyspace all")
	command("db 0")
	if n := m.store.recs.Len(); n != 127 || !strings.Contains(screenText(m), srv.Addr+"/0") {
		t.Fatalf("back: %d records\n%s", n, screenText(m))
	}
	command("db x")
	if !strings.Contains(m.Status, "needs a database number") {
		t.Fatalf("status %q", m.Status)
	}

	w := newTestModelWith(t, 80, 24, fixture(atlas, 10), executor(t, true))
	press(w, ":")
	typeText(w, "db 5")
	press(w, "enter")
	if !strings.Contains(w.Status, "restart with --db 5") {
		t.Fatalf("a writing session switched database: %q", w.Status)
	}
}

// :profile NAME swaps in another profile's server and policy without a
// restart: what the old one showed is dropped, its resources released, and
// an error leaves the session as it was.
func TestSwitchProfile(t *testing.T) {
	srv, c, ks := seeded(t)
	ctx := t.Context()
	other := srv.Client(5)
	defer other.Close()
	if _, err := appsim.Seed(ctx, other, appsim.Plan{Schema: "atlasmart", Count: 40, ReserveTTL: time.Hour,
		ProcessingTimeout: 10 * time.Minute, Retention: time.Hour}); err != nil {
		t.Fatal(err)
	}
	closed := 0
	open := func(_ context.Context, name string) (Options, func(), error) {
		if name != "staging" {
			return Options{}, nil, errors.New("no profile " + name + " in the config")
		}
		return Options{Client: other, Keyspaces: []*inspect.Keyspace{ks}, Profile: "staging", Address: srv.URL(5), Notice: "a warning"},
			func() { closed++ }, nil
	}
	m := New(ctx, Options{Client: c, Keyspaces: []*inspect.Keyspace{ks}, Profile: "prod", Address: srv.URL(0), NoColor: true, OpenProfile: open})
	m.resize(100, 30)
	run(m, m.scan.start())
	command := func(line string) {
		press(m, ":")
		typeText(m, line)
		_, cmd := m.Update(tea.KeyPressMsg{Code: tea.KeyEnter})
		run(m, cmd)
	}
	command("profile nope")
	if m.Opts.Profile != "prod" || m.store.recs.Len() != 300 || !strings.Contains(m.Status, "no profile nope") {
		t.Fatalf("a failed switch changed the session: %q, %d records, status %q", m.Opts.Profile, m.store.recs.Len(), m.Status)
	}
	press(m, ":")
	typeText(m, "profile staging")
	_, open1 := m.Update(tea.KeyPressMsg{Code: tea.KeyEnter})
	_, scan := m.Update(open1()) // the profile opened: its notice is a banner for the session
	if !strings.Contains(m.Status, "now reading profile staging") || !strings.Contains(screenText(m), "⚠ a warning") {
		t.Errorf("status after the switch: %q\n%s", m.Status, screenText(m))
	}
	run(m, scan)
	if got := screenText(m); m.Opts.Profile != "staging" || m.store.recs.Len() != 40 || !strings.Contains(got, "staging") ||
		!strings.Contains(got, srv.Addr+"/5") || m.Opts.OpenProfile == nil {
		t.Fatalf("after :profile staging: %d records\n%s", m.store.recs.Len(), got)
	}
	command("profile staging")
	if closed != 1 {
		t.Errorf("switching again released %d profiles, want 1", closed)
	}
	m.shutdown()
	if closed != 2 {
		t.Errorf("quitting released %d profiles, want 2", closed)
	}
}

// What opening the session warned of (a verify hook that cannot run) is a
// banner from the first frame, not a status line gone in a second.
func TestSessionNoticeIsABanner(t *testing.T) {
	_, c := redistest.SharedClient(t)
	m := New(t.Context(), Options{Client: c, Keyspaces: []*inspect.Keyspace{testKeyspace(t)},
		Notice: "keyspace orders: verify hook /nope/verify-orders does not exist"})
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	if got := screenText(m); !strings.Contains(got, "⚠ keyspace orders: verify hook /nope/verify-orders") {
		t.Fatalf("no banner for the session's notice:\n%s", got)
	}
}
