package consumerapp_test

import (
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/idemctl/idemctl/internal/appsim"
	"github.com/idemctl/idemctl/internal/testkit/consumerapp"
	"github.com/idemctl/idemctl/internal/testkit/pgtest"
	"github.com/idemctl/idemctl/internal/testkit/redistest"
)

func TestMain(m *testing.M) {
	consumerapp.MainIfChild()
	os.Exit(redistest.RunMain(m))
}

// Consumers that die by kill -9 at their crash points leave exactly the
// entry each held pending, and no effect is applied twice.
func TestConsumerProcessesCrashWithEntriesPending(t *testing.T) {
	srv, rc := redistest.SharedClient(t)
	pg := pgtest.Own(t)
	ctx := t.Context()
	stream := fmt.Sprintf("payments:events:%d", time.Now().UnixNano())
	if err := rc.XGroupCreateMkStream(ctx, stream, "billing", "$").Err(); err != nil {
		t.Fatal(err)
	}
	var events []appsim.PaymentEvent
	for i := 1; i <= 20; i++ {
		events = append(events, appsim.PaymentEvent{ID: fmt.Sprintf("evt-%02d", i), Amount: int64(i * 100)})
	}
	ids, err := appsim.Publish(ctx, rc, stream, events)
	if err != nil {
		t.Fatal(err)
	}
	opt := func(consumer string, cfg appsim.ConsumerConfig) consumerapp.Options {
		cfg.Stream, cfg.Group, cfg.Consumer, cfg.Ledger = stream, "billing", consumer, stream+":ledger"
		return consumerapp.Options{Addr: srv.Addr, DSN: pg.DSN(), Config: cfg}
	}
	if !consumerapp.Run(t, opt("worker-1", appsim.ConsumerConfig{CrashBeforeEffect: []string{"evt-05"}}), 30*time.Second) {
		t.Fatal("worker-1 did not crash at evt-05")
	}
	if !consumerapp.Run(t, opt("worker-2", appsim.ConsumerConfig{CrashAfterEffect: []string{"evt-09"}}), 30*time.Second) {
		t.Fatal("worker-2 did not crash at evt-09")
	}
	if consumerapp.Run(t, opt("worker-3", appsim.ConsumerConfig{Idle: 500 * time.Millisecond}), 30*time.Second) {
		t.Fatal("worker-3 crashed")
	}
	pend, err := rc.XPendingExt(ctx, &redis.XPendingExtArgs{Stream: stream, Group: "billing", Start: "-", End: "+", Count: 100}).Result()
	if err != nil {
		t.Fatal(err)
	}
	if len(pend) != 2 || pend[0].ID != ids[4] || pend[0].Consumer != "worker-1" || pend[1].ID != ids[8] || pend[1].Consumer != "worker-2" {
		t.Fatalf("pending: %+v", pend)
	}
	var rows, distinct int
	if err := pg.DB().QueryRowContext(ctx, `SELECT count(*), count(DISTINCT event_id) FROM effects`).Scan(&rows, &distinct); err != nil {
		t.Fatal(err)
	}
	if rows != 19 || distinct != 19 { // all but evt-05; evt-09's effect happened before its crash
		t.Fatalf("effects: %d rows, %d events", rows, distinct)
	}
	if n := rc.ZCard(ctx, stream+":ledger").Val(); n != 18 { // evt-09 never reached the ledger
		t.Fatalf("ledger holds %d events", n)
	}
}
