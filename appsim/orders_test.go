package appsim_test

import (
	"context"
	"testing"
	"time"

	"github.com/idemctl/idemctl/appsim"
	"github.com/idemctl/idemctl/internal/pgtest"
	"github.com/idemctl/idemctl/internal/redistest"
)

// The application's ground truth matches Redis and the database: completed
// requests are SUCCEEDED with their order's response, crashed ones stay
// PROCESSING, with an order exactly when they crashed after the insert.
func TestOrdersAppGroundTruth(t *testing.T) {
	_, rc := redistest.SharedClient(t)
	pg := pgtest.Own(t)
	app := appsim.NewOrdersApp(rc, pg.DB(), appsim.OrdersConfig{CrashBeforeInsert: 0.2, CrashAfterInsert: 0.2, RandSeed: 7})
	app.Serve(60)
	run, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { app.Run(run); close(done) }()
	for len(app.Truth().Completed) < 60 {
		time.Sleep(10 * time.Millisecond)
	}
	stop()
	<-done
	ctx := context.Background()
	tr := app.Truth()
	if tr.Errors != 0 || len(tr.Refused) != 0 {
		t.Fatalf("errors %d, refused %d", tr.Errors, len(tr.Refused))
	}
	if len(tr.CrashedBeforeInsert) == 0 || len(tr.CrashedAfterInsert) == 0 {
		t.Fatalf("no crashes of one kind: %d before, %d after", len(tr.CrashedBeforeInsert), len(tr.CrashedAfterInsert))
	}
	orders := func(w appsim.OrderWrite) (id int64, resp string, n int) {
		rows, err := pg.DB().Query(`SELECT id, response FROM orders WHERE principal = $1 AND idem_key = $2`, w.Principal, w.IdemKey)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		for rows.Next() {
			n++
			if err := rows.Scan(&id, &resp); err != nil {
				t.Fatal(err)
			}
		}
		return id, resp, n
	}
	for _, w := range tr.Completed {
		h := rc.HGetAll(ctx, w.Key).Val()
		id, resp, n := orders(w)
		if h["state"] != "SUCCEEDED" || h["response"] != w.Response || n != 1 || id != w.OrderID || resp != w.Response || h["fingerprint"] != w.Fingerprint {
			t.Fatalf("completed %s: record %v, order %d %q (%d rows), app %+v", w.Key, h, id, resp, n, w)
		}
	}
	for _, w := range tr.CrashedAfterInsert {
		id, _, n := orders(w)
		if st := rc.HGet(ctx, w.Key, "state").Val(); st != "PROCESSING" || n != 1 || id != w.OrderID {
			t.Fatalf("crashed after insert %s: state %s, %d orders", w.Key, st, n)
		}
	}
	for _, w := range tr.CrashedBeforeInsert {
		if _, _, n := orders(w); n != 0 || rc.HGet(ctx, w.Key, "state").Val() != "PROCESSING" {
			t.Fatalf("crashed before insert %s: %d orders", w.Key, n)
		}
	}
}
