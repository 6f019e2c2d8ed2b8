package ui

import (
	"context"
	"testing"
	"time"

	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/inspect/follow"
)

// BenchmarkLiveBatch is what one message of live updates costs the UI
// goroutine at 1M records held: 2,048 updates (upserts of held records,
// a new one, a removal) applied, the view re-placed, the cursor kept.
// BenchmarkLiveRecount is the counts and timeline drawn again.
func BenchmarkLiveBatch(b *testing.B) {
	m, ups := liveBench(b)
	b.ResetTimer()
	for range b.N {
		m.scan.onLive(liveMsg{l: m.scan.live, ups: ups})
	}
}

func BenchmarkLiveRecount(b *testing.B) {
	m, _ := liveBench(b)
	b.ResetTimer()
	for range b.N {
		m.scan.recount(m.scan.live)
	}
}

func liveBench(b *testing.B) (*Model, []follow.Update) {
	ks := testKeyspace(b)
	recs := fixture(ks, 1_000_000)
	m := New(context.Background(), Options{Keyspaces: []*inspect.Keyspace{ks}, NoColor: true})
	m.store.add(recs)
	m.store.mergeTail(true)
	m.scan.live = &liveState{live: true, done: make(chan struct{}), ch: make(chan follow.Update), edit: liveEdit{changed: map[int32]bool{}},
		starts: map[uint64]int64{}, statsAt: time.Now()}
	m.records.cursorTo(500)
	ups := make([]follow.Update, 0, maxLiveBatch)
	for i := 0; len(ups) < maxLiveBatch; i += 487 {
		r := recs[i]
		r.State = inspect.StateSucceeded
		ups = append(ups, follow.Update{Kind: follow.KindUpsert, Record: r, At: time.Now()})
	}
	return m, ups
}
