package actions

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/idemctl/idemctl/actions/write"
	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/inspect/snapshot"
	"github.com/idemctl/idemctl/internal/appsim"
	"github.com/idemctl/idemctl/internal/testkit/inspecttest"
	"github.com/idemctl/idemctl/internal/testkit/redistest"
)

// TestSnapshotVersionsMatchLive: the version a snapshot gives each record
// is, part for part, the one the version script reads from the server
// that wrote it — for every encoding, field TTLs, and lock companions —
// so a write pinned to the file applies to an unchanged record.
func TestSnapshotVersionsMatchLive(t *testing.T) {
	srv, c := redistest.SharedClient(t)
	ctx := t.Context()
	timing := appsim.Plan{ReserveTTL: time.Hour, ProcessingTimeout: 30 * time.Second, Retention: 2 * time.Hour, LargeResponse: 4096}
	fieldTTL := inspecttest.SeedEncodings(t, c, timing, inspecttest.Encodings{Listpack: 200, Strings: 100, Hashtable: 50, FieldTTL: 50})
	now := float64(time.Now().UnixMicro()) / 1e6
	c.Set(ctx, "idempotency_keys:done", `{"status":201,"response":"`+strings.Repeat("x", 3000)+`"}`, time.Hour)
	c.Set(ctx, "idempotency_keys:lock:done", fmt.Sprint(now-1), time.Minute)
	c.Set(ctx, "idempotency_keys:lock:running", fmt.Sprint(now-2), time.Minute)
	c.Set(ctx, "idempotency_keys:bare", `{"status":200}`, 0)

	src, err := snapshot.Open(snapshot.Spec{Path: srv.Snapshot(t), Versions: true})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	kss := []*inspect.Keyspace{inspecttest.Keyspace(t, "atlasmart"), inspecttest.Keyspace(t, "setnx"), inspecttest.Keyspace(t, "marker-lock")}
	n := 0
	_, err = inspect.Scan(ctx, nil, kss, inspect.Options{Snapshot: src, Versions: true}, func(b inspect.Batch) error {
		if len(b.Versions) != len(b.Records) {
			t.Fatalf("%d versions for %d records", len(b.Versions), len(b.Records))
		}
		for i, r := range b.Records {
			sv := b.Versions[i]
			got := write.Version{Type: sv.Type, Content: sv.Content, Expiry: sv.Expiry, Companion: sv.Companion}
			live, err := fetchVersion(context.Background(), c, r.Key, companionKey(b.Keyspace, r.Key, r.Flags.Has(inspect.FlagLockOnly)))
			if err != nil {
				t.Fatal(err)
			}
			if sv.Err != "" || got != live {
				t.Errorf("%s %q:\n snapshot %+v %s\n live     %+v", b.Keyspace.Name, r.Key, got, sv.Err, live)
			}
			n++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := 350 + 3; fieldTTL && n != want+50 || !fieldTTL && n != want {
		t.Fatalf("%d records compared", n)
	}
}
