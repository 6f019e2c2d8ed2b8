package inspect_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/idemctl/idemctl/appsim"
	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/internal/redistest"
)

func TestScanCallbackStopsEarly(t *testing.T) {
	srv := redistest.Shared(t)
	c := srv.Client(0)
	defer c.Close()
	ctx := context.Background()
	if _, err := appsim.Seed(ctx, c, appsim.Plan{Schema: "setnx", Count: 3000, ReserveTTL: time.Hour,
		ProcessingTimeout: time.Minute, Retention: time.Hour, LargeResponse: 16 << 10}); err != nil {
		t.Fatal(err)
	}
	ks := keyspace(t, "setnx")
	kss := []*inspect.Keyspace{ks}
	opt := inspect.Options{Count: 100}

	var got int
	covs, err := inspect.Scan(ctx, c, kss, opt, func(b inspect.Batch) error {
		got += len(b.Records)
		return nil
	})
	if err != nil || got != 3000 || len(covs) != 1 || !covs[0].Complete {
		t.Fatalf("whole scan: %d records, err %v, coverage %+v", got, err, covs)
	}

	calls := 0
	covs, err = inspect.Scan(ctx, c, kss, opt, func(inspect.Batch) error {
		calls++
		return inspect.Stop
	})
	if err != nil || calls != 1 || covs[0].Complete || !errors.Is(covs[0].Err, context.Canceled) {
		t.Fatalf("stopped scan: %d calls, err %v, coverage %+v (want one call, no error, incomplete)", calls, err, covs[0])
	}

	boom := errors.New("disk full")
	calls = 0
	_, err = inspect.Scan(ctx, c, kss, opt, func(inspect.Batch) error {
		calls++
		return boom
	})
	if !errors.Is(err, boom) || calls != 1 {
		t.Fatalf("failing callback: err %v after %d calls, want %v after 1", err, calls, boom)
	}

	s := inspect.StartScan(ctx, c, kss, opt)
	got = 0
	for b := range s.Batches {
		got += len(b.Records)
	}
	first, again := s.Coverage(), s.Coverage()
	if got != 3000 || len(first) != 1 || !first[0].Complete || len(again) != 1 {
		t.Fatalf("stream: %d records, coverage %+v then %+v", got, first, again)
	}
}
