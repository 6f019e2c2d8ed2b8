package ui

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/redis/go-redis/v9"

	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/internal/appsim"
	"github.com/idemctl/idemctl/internal/testkit/redistest"
	"github.com/idemctl/idemctl/sandbox"
)

// pump runs a model as the bubbletea runtime does: each Cmd in a
// goroutine of its own, each message into Update on the test's goroutine.
type pump struct {
	t      *testing.T
	m      *Model
	msgs   chan tea.Msg
	ctx    context.Context
	labels []string // the header's live labels, in the order shown
}

func newPump(t *testing.T, m *Model) *pump {
	return &pump{t: t, m: m, msgs: make(chan tea.Msg, 64), ctx: t.Context()}
}

func (p *pump) do(cmd tea.Cmd) {
	if cmd == nil {
		return
	}
	go func() {
		msg := cmd()
		if b, ok := msg.(tea.BatchMsg); ok {
			for _, c := range b {
				p.do(c)
			}
			return
		}
		if msg == nil {
			return
		}
		select {
		case p.msgs <- msg:
		case <-p.ctx.Done():
		}
	}()
}

// until feeds messages to the model until cond holds, at most 15s.
func (p *pump) until(what string, cond func() bool) {
	p.t.Helper()
	end := time.After(15 * time.Second)
	for !cond() {
		select {
		case msg := <-p.msgs:
			if _, ok := msg.(tickMsg); ok {
				continue
			}
			_, cmd := p.m.Update(msg)
			p.do(cmd)
			if l := p.m.scan.liveLabel(); len(p.labels) == 0 || p.labels[len(p.labels)-1] != l {
				p.labels = append(p.labels, l)
			}
		case <-end:
			p.t.Fatalf("%s: not within 15s (header %q, labels %q)", what, p.m.scan.liveLabel(), p.labels)
		}
	}
}

func (p *pump) record(key string) *inspect.Record {
	if i := p.m.store.lookup(key); i >= 0 {
		return p.m.store.recs.At(i)
	}
	return nil
}

// freshScan is what a full pass reads now: state and staleness by key.
func freshScan(t *testing.T, c redis.UniversalClient, ks *inspect.Keyspace) map[string]string {
	out := make(chan inspect.Batch, 16)
	go func() { inspect.ScanAll(t.Context(), c, []*inspect.Keyspace{ks}, inspect.Options{}, out) }()
	got := map[string]string{}
	for b := range out {
		for _, r := range b.Records {
			got[r.Key] = fmt.Sprintf("%s stale=%t", r.State, r.Stale())
		}
	}
	return got
}

func heldView(m *Model) map[string]string {
	got := map[string]string{}
	for i := range m.store.recs.Len() {
		r := m.store.recs.At(i)
		got[r.Key] = fmt.Sprintf("%s stale=%t", r.State, r.Stale())
	}
	return got
}

func sameView(t *testing.T, p *pump, c redis.UniversalClient, ks *inspect.Keyspace) bool {
	want, got := freshScan(t, c, ks), heldView(p.m)
	if len(want) != len(got) || len(p.m.store.view) != len(got) {
		return false
	}
	for k, v := range want {
		if got[k] != v {
			return false
		}
	}
	return true
}

// A live model follows: a record written after the first scan appears,
// completes in place, turns stale on time and disappears when deleted;
// a FLUSHDB and a killed watch connection show NOT LIVE, then LIVE with
// the view equal to a fresh scan; a rescan and quitting stop the follower.
func TestLiveModelFollows(t *testing.T) {
	_, c := redistest.OwnClient(t)
	ctx := t.Context()
	ks := testKeyspace(t)
	ks.ReserveTTL, ks.ProcessingTimeout, ks.Retention = time.Hour, 2*time.Second, time.Hour
	for i := range 20 {
		k := appsim.OrderKey("customer-1", fmt.Sprintf("seed-%02d", i))
		appsim.Reserve.Run(ctx, c, []string{k}, "fp", 3600)
		appsim.Complete.Run(ctx, c, []string{k}, "fp", 201, "{}", 3600)
	}
	m := New(ctx, Options{Client: c, Keyspaces: []*inspect.Keyspace{ks}, Address: "live", NoColor: true, Follow: true})
	m.resize(160, 30)
	p := newPump(t, m)
	p.do(m.scan.start())
	p.until("LIVE after the first scan", func() bool { return m.scan.liveLabel() == "LIVE" })
	if h := m.chrome.headerView(m.screen); !strings.Contains(h, "LIVE") || strings.Contains(h, "NOT LIVE") {
		t.Fatalf("header %q: want LIVE", h)
	}
	m.records.cursorTo(5)
	onto := m.records.cursorKey()

	key := appsim.OrderKey("customer-2", "new-1")
	appsim.Reserve.Run(ctx, c, []string{key}, "fp", 3600)
	p.until("a new record appears", func() bool { r := p.record(key); return r != nil && r.State == inspect.StateProcessing })
	appsim.Complete.Run(ctx, c, []string{key}, "fp", 201, "{}", 3600)
	p.until("it completes in place", func() bool { r := p.record(key); return r != nil && r.State == inspect.StateSucceeded })
	if m.records.cursorKey() != onto {
		t.Fatalf("cursor moved from %s to %s", onto, m.records.cursorKey())
	}

	stuck := appsim.OrderKey("customer-3", "stuck-1")
	appsim.Reserve.Run(ctx, c, []string{stuck}, "fp", 3600)
	p.until("the stuck record is read", func() bool { return p.record(stuck) != nil })
	start := time.Now()
	p.until("it turns stale on time", func() bool { r := p.record(stuck); return r != nil && r.Stale() })
	if late := time.Since(start); late > 4*time.Second {
		t.Fatalf("stale after %s, timeout 2s", late)
	}
	p.until("the Overview counts it", func() bool { return m.stats.Report().Stale == 1 })

	c.Del(ctx, key)
	p.until("the deleted record disappears", func() bool { return p.record(key) == nil })

	p.labels = nil
	c.FlushDB(ctx)
	for i := range 5 {
		k := appsim.OrderKey("customer-4", fmt.Sprintf("after-%d", i))
		appsim.Reserve.Run(ctx, c, []string{k}, "fp", 3600)
	}
	p.until("NOT LIVE after FLUSHDB", func() bool { return strings.HasPrefix(m.scan.liveLabel(), "NOT LIVE") })
	p.until("LIVE again, equal to a fresh scan", func() bool {
		return m.scan.liveLabel() == "LIVE" && sameView(t, p, c, ks)
	})

	killFollower(t, c)
	p.until("NOT LIVE after the watch connection is killed", func() bool { return strings.HasPrefix(m.scan.liveLabel(), "NOT LIVE") })
	appsim.Reserve.Run(ctx, c, []string{appsim.OrderKey("customer-5", "during")}, "fp", 3600)
	p.until("LIVE again after the kill, equal to a fresh scan", func() bool {
		return m.scan.liveLabel() == "LIVE" && sameView(t, p, c, ks)
	})

	l := m.scan.live
	p.do(m.scan.start()) // r: the follower stops, the rescan starts another
	assertStopped(t, l)
	p.until("LIVE after the rescan", func() bool { return m.scan.liveLabel() == "LIVE" })
	l = m.scan.live
	m.shutdown()
	assertStopped(t, l)
	if m.scan.live != nil {
		t.Fatal("still following after quitting")
	}
}

func assertStopped(t *testing.T, l *liveState) {
	t.Helper()
	select {
	case <-l.done:
	default:
		t.Fatal("the follower still runs")
	}
}

// killFollower kills the follower's watch connection.
func killFollower(t *testing.T, c *redis.Client) {
	t.Helper()
	list, err := c.ClientList(t.Context()).Result()
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(list) {
		f := strings.Fields(line)
		if slices.Contains(f, "name=idemctl-follow") {
			id := strings.TrimPrefix(f[0], "id=")
			if err := c.Do(t.Context(), "CLIENT", "KILL", "ID", id).Err(); err != nil {
				t.Fatal(err)
			}
			return
		}
	}
	t.Fatalf("no watch connection in CLIENT LIST:\n%s", list)
}

// The demo's miniredis has no CLIENT TRACKING and no notifications: the
// header says why the view is not live, and --refresh passes stay.
func TestDemoSaysWhyNotLive(t *testing.T) {
	d, err := sandbox.Start(t.Context(), sandbox.Config{Count: 50})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Stop()
	m := New(t.Context(), Options{Client: d.Client, Keyspaces: []*inspect.Keyspace{d.Keyspace}, Demo: true, NoColor: true,
		Follow: true, Refresh: time.Hour})
	m.resize(160, 30)
	p := newPump(t, m)
	p.do(m.scan.start())
	p.until("NOT LIVE and why", func() bool { return m.scan.live == nil && strings.HasPrefix(m.scan.liveLabel(), "NOT LIVE: ") })
	t.Logf("header: %s", m.scan.liveLabel())
	if !strings.Contains(m.chrome.progressView(), "refresh every 1h0m0s") {
		t.Fatalf("scan line %q: the refresh passes should stay", m.chrome.progressView())
	}
}

// :db stops the follower of the old source and starts one on the new;
// quitting stops it, and no goroutine of the session is left behind.
func TestLiveSwitchFollowsTheNewSource(t *testing.T) {
	srv, c := redistest.OwnClient(t)
	ctx := t.Context()
	c5 := srv.Client(5)
	defer c5.Close()
	ks := testKeyspace(t)
	ks.ReserveTTL, ks.ProcessingTimeout, ks.Retention = time.Hour, time.Hour, time.Hour
	appsim.Reserve.Run(ctx, c, []string{appsim.OrderKey("customer-1", "db0")}, "fp", 3600)
	appsim.Reserve.Run(ctx, c5, []string{appsim.OrderKey("customer-1", "db5")}, "fp", 3600)
	before := runtime.NumGoroutine()
	m := New(ctx, Options{Client: c, Keyspaces: []*inspect.Keyspace{ks}, Address: srv.URL(0), NoColor: true, Follow: true})
	m.resize(160, 30)
	p := newPump(t, m)
	p.do(m.scan.start())
	p.until("LIVE on db 0", func() bool { return m.scan.liveLabel() == "LIVE" })
	old := m.scan.live
	press(m, ":")
	typeText(m, "db 5")
	_, cmd := m.Update(tea.KeyPressMsg{Code: tea.KeyEnter})
	assertStopped(t, old)
	p.do(cmd)
	p.until("LIVE on db 5", func() bool { return m.scan.live != nil && m.scan.live != old && m.scan.liveLabel() == "LIVE" })
	if p.record(appsim.OrderKey("customer-1", "db5")) == nil || m.store.recs.Len() != 1 {
		t.Fatalf("db 5: %d records", m.store.recs.Len())
	}
	appsim.Reserve.Run(ctx, c, []string{appsim.OrderKey("customer-2", "db0-later")}, "fp", 3600)
	late := appsim.OrderKey("customer-2", "db5-later")
	appsim.Reserve.Run(ctx, c5, []string{late}, "fp", 3600)
	p.until("db 5's new record appears", func() bool { return p.record(late) != nil })
	if m.store.recs.Len() != 2 {
		t.Fatalf("db 5: %d records, want 2 (db 0's write is not db 5's)", m.store.recs.Len())
	}
	l := m.scan.live
	m.shutdown()
	assertStopped(t, l)
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before+2 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before+2 {
		t.Fatalf("%d goroutines after quitting, %d before", n, before)
	}
}

// While following, the Overview's history takes a point every 10s, the
// last one current, so its 30 points span minutes as with passes.
func TestLiveHistoryTakesAPointEveryTenSeconds(t *testing.T) {
	ks := testKeyspace(t)
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	m := New(t.Context(), Options{Keyspaces: []*inspect.Keyspace{ks}, NoColor: true, Now: func() time.Time { return now }})
	m.store.add(fixture(ks, 50))
	m.afterScan(now, now.UnixMilli()) // the first scan's point
	l := &liveState{done: make(chan struct{}), edit: liveEdit{changed: map[int32]bool{}}, starts: map[uint64]int64{}}
	m.scan.live = l
	for range 25 { // 25 recounts a second apart
		now = now.Add(time.Second)
		m.scan.recount(l)
	}
	if n := len(m.history); n != 4 { // the scan's, 0-9s, 10-19s, the current one
		t.Fatalf("%d points after 25s of recounts, want 4", n)
	}
	if got := m.history[len(m.history)-1].at; !got.Equal(now) {
		t.Fatalf("the current point is from %s, want %s", got, now)
	}
}
