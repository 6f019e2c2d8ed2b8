package snapshot_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/inspect/rdb"
	"github.com/idemctl/idemctl/inspect/snapshot"
	"github.com/idemctl/idemctl/internal/appsim"
	"github.com/idemctl/idemctl/internal/testkit/inspecttest"
	"github.com/idemctl/idemctl/internal/testkit/redistest"
)

// scanSnapshot reads a snapshot for kss, each keyspace's records apart.
func scanSnapshot(t *testing.T, spec snapshot.Spec, kss []*inspect.Keyspace, opt inspect.Options) (map[string][]inspect.Record, []inspect.Coverage, snapshot.Info) {
	t.Helper()
	src, err := snapshot.Open(spec)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	opt.Snapshot = src
	recs := map[string][]inspect.Record{}
	covs, err := inspect.Scan(t.Context(), nil, kss, opt, func(b inspect.Batch) error {
		recs[b.Keyspace.Name] = append(recs[b.Keyspace.Name], b.Records...)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return recs, covs, src.Info()
}

// TestSnapshotReadsLikeLive seeds every record shape into the server under
// test, saves, and compares a scan of the file with a live scan of the
// same server a moment later: the same keys, states, fingerprints,
// statuses, captures and flags, TTLs and ages within the snapshot's age.
func TestSnapshotReadsLikeLive(t *testing.T) {
	srv, c := redistest.SharedClient(t)
	ctx := t.Context()
	timing := appsim.Plan{ReserveTTL: 60 * time.Second, ProcessingTimeout: 30 * time.Second, Retention: 300 * time.Second, LargeResponse: 4096}
	inspecttest.SeedEncodings(t, c, timing, inspecttest.Encodings{Listpack: 300, Strings: 300, Hashtable: 200, FieldTTL: 200})
	seedMarkerLocks(t, ctx, c)
	// Keys a snapshot must skip or count: other types under the patterns,
	// another database, keys that expire before the snapshot is read.
	c.RPush(ctx, "idempotency_keys:a-list", "x")
	c.SAdd(ctx, "idem:set", "x")
	c.XAdd(ctx, &redis.XAddArgs{Stream: "stream:x", Values: []any{"f", "v"}})
	srv.Client(1).Set(ctx, "idempotency_keys:db1", `{"status":200}`, 0)

	path := srv.Snapshot(t)
	kss := []*inspect.Keyspace{
		inspecttest.Spec(t, inspect.KeyspaceSpec{Name: "atlasmart", Schema: inspecttest.Preset(t, "atlasmart"), ProcessingTimeout: 30 * time.Second, ReserveTTL: 60 * time.Second, LargeResponse: 4096}),
		inspecttest.Spec(t, inspect.KeyspaceSpec{Name: "setnx", Schema: inspecttest.Preset(t, "setnx"), ProcessingTimeout: 30 * time.Second, ReserveTTL: 60 * time.Second}),
		inspecttest.Spec(t, inspect.KeyspaceSpec{Name: "marker-lock", Schema: inspecttest.Preset(t, "marker-lock"), ProcessingTimeout: 30 * time.Second}),
	}
	opt := inspect.Options{ResponseSizes: true}
	snap, covs, info := scanSnapshot(t, snapshot.Spec{Path: path}, kss, opt)
	liveAt := time.Now()
	for _, ks := range kss {
		live, cov := inspecttest.ScanAll(t, c, ks, opt)
		if !cov.Complete {
			t.Fatalf("live scan of %s incomplete: %v", ks.Name, cov.Err)
		}
		compareSnapshot(t, ks.Name, snap[ks.Name], live, liveAt.Sub(info.At)+time.Second)
	}
	for _, cov := range covs {
		if !cov.Complete || cov.Err != nil || cov.Role != "snapshot" || cov.Node != path {
			t.Errorf("coverage %+v", cov)
		}
	}
	if info.Checksum != "verified" || info.AtFrom != "snapshot" || time.Since(info.Taken) > time.Minute || info.Keys <= info.DBKeys {
		t.Errorf("info %+v", info)
	}
	t.Logf("%s: %s, %d keys in db 0, %d in the file", redistest.Describe(), info, info.DBKeys, info.Keys)

	// Judged later (--at): what had expired by then is counted, not shown.
	later := info.Taken.Add(10 * time.Minute)
	laterRecs, laterCovs, laterInfo := scanSnapshot(t, snapshot.Spec{Path: path, At: later}, kss[1:2], opt)
	if laterInfo.AtFrom != "--at" || laterCovs[0].Expired == 0 || int64(len(laterRecs["setnx"]))+laterCovs[0].Expired != laterCovs[0].Keys {
		t.Errorf("at +10m: %d records, coverage %+v", len(laterRecs["setnx"]), laterCovs[0])
	}
	for _, r := range laterRecs["setnx"] {
		if r.TTLms != -1 {
			t.Errorf("%q: TTL %d left 10 minutes on, past every seeded TTL", r.Key, r.TTLms)
		}
	}

	// The same file through a pipe, as `redis-cli --rdb -` streams it:
	// keyspaces without companion locks read in one pass.
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	piped, _, _ := scanSnapshot(t, snapshot.Spec{Path: "-", Stdin: f}, kss[:2], opt)
	for _, ks := range kss[:2] {
		if len(piped[ks.Name]) != len(snap[ks.Name]) {
			t.Errorf("%s: %d records through a pipe, %d from the file", ks.Name, len(piped[ks.Name]), len(snap[ks.Name]))
		}
	}
}

// seedMarkerLocks writes marker+lock records: completed responses, a
// request in flight (its lock only), a stale lock without TTL, and a lock
// whose record completed.
func seedMarkerLocks(t *testing.T, ctx context.Context, c *redis.Client) {
	t.Helper()
	now := float64(time.Now().UnixMicro()) / 1e6
	p := c.Pipeline()
	p.Set(ctx, "idempotency_keys:done-1", `{"status":201,"headers":{},"response":"{\"id\":1}"}`, time.Hour)
	p.Set(ctx, "idempotency_keys:done-2", `{"status":200,"headers":{},"response":"ok"}`, time.Hour)
	p.Set(ctx, "idempotency_keys:lock:done-2", fmt.Sprint(now-1), time.Minute)
	p.Set(ctx, "idempotency_keys:lock:running", fmt.Sprint(now-2), time.Minute)
	p.Set(ctx, "idempotency_keys:lock:stuck", fmt.Sprint(now-600), 0)
	if _, err := p.Exec(ctx); err != nil {
		t.Fatal(err)
	}
}

func compareSnapshot(t *testing.T, name string, snap, live []inspect.Record, age time.Duration) {
	t.Helper()
	if len(snap) != len(live) || len(live) == 0 {
		t.Errorf("%s: %d records from the snapshot, %d live", name, len(snap), len(live))
	}
	want := map[string]inspect.Record{}
	for _, r := range live {
		want[r.Key] = r
	}
	const estimated = inspect.FlagMemoryEstimated
	for _, s := range snap {
		l, ok := want[s.Key]
		if !ok {
			t.Errorf("%s: %q from the snapshot is not live", name, s.Key)
			continue
		}
		if s.State != l.State || s.RawState != l.RawState || s.Fingerprint != l.Fingerprint || s.Status != l.Status ||
			fmt.Sprint(s.Groups) != fmt.Sprint(l.Groups) || s.Flags&^estimated != l.Flags&^estimated || s.Type != l.Type ||
			s.ResponseLen != l.ResponseLen || s.AgeSource != l.AgeSource {
			t.Errorf("%s %q:\n snapshot %s %q fp=%q status=%d groups=%v flags=%v resp=%d age=%s\n live     %s %q fp=%q status=%d groups=%v flags=%v resp=%d age=%s",
				name, s.Key, s.State, s.RawState, s.Fingerprint, s.Status, s.Groups, s.Flags, s.ResponseLen, s.AgeSource,
				l.State, l.RawState, l.Fingerprint, l.Status, l.Groups, l.Flags, l.ResponseLen, l.AgeSource)
		}
		if !within(s.TTLms, l.TTLms, -age) || !within(s.AgeMs, l.AgeMs, age) || !within(s.LockTTLms, l.LockTTLms, -age) {
			t.Errorf("%s %q: ttl %d age %d lock %d in the snapshot, %d %d %d live (%v later)", name, s.Key, s.TTLms, s.AgeMs, s.LockTTLms, l.TTLms, l.AgeMs, l.LockTTLms, age)
		}
		if !s.Flags.Has(inspect.FlagLockOnly) && (s.MemoryBytes <= 0 || !s.Flags.Has(estimated)) {
			t.Errorf("%s %q: memory %d, flags %v: want an estimate, flagged", name, s.Key, s.MemoryBytes, s.Flags)
		}
	}
}

// within: live is the snapshot's value moved by at most d (a TTL falls, an
// age grows, as time passes between the two reads); negative values
// (none, unknown) must be equal.
func within(snap, live int64, d time.Duration) bool {
	if snap < 0 || live < 0 {
		return snap == live
	}
	diff := live - snap
	if d < 0 {
		return diff <= 0 && diff >= d.Milliseconds()
	}
	return diff >= 0 && diff <= d.Milliseconds()
}

// TestSnapshotFaults: a damaged file stops the read with the byte offset;
// what was read before it is delivered and the coverage is incomplete.
func TestSnapshotFaults(t *testing.T) {
	srv, c := redistest.SharedClient(t)
	if _, err := appsim.Seed(t.Context(), c, appsim.Plan{Schema: "setnx", Count: 2000, ReserveTTL: time.Minute, ProcessingTimeout: 30 * time.Second, Retention: time.Hour, RandSeed: 5}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(srv.Snapshot(t))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cut := filepath.Join(dir, "cut.rdb")
	os.WriteFile(cut, b[:len(b)*2/3], 0o600)
	ks := inspecttest.Keyspace(t, "setnx")
	recs, covs, _ := scanSnapshot(t, snapshot.Spec{Path: cut}, []*inspect.Keyspace{ks}, inspect.Options{Count: 100})
	var fe *rdb.FormatError
	if covs[0].Complete || !errors.As(covs[0].Err, &fe) || !fe.Truncated || len(recs["setnx"]) == 0 || len(recs["setnx"]) >= 2000 {
		t.Fatalf("cut file: %d records, coverage %+v", len(recs["setnx"]), covs[0])
	}
	if !strings.Contains(covs[0].Err.Error(), "snapshot "+cut+": at byte ") {
		t.Errorf("message %q", covs[0].Err)
	}
	noCtime := filepath.Join(dir, "old.rdb")
	os.WriteFile(noCtime, []byte("REDIS0006\xff\x00\x00\x00\x00\x00\x00\x00\x00"), 0o600)
	if _, err := snapshot.Open(snapshot.Spec{Path: noCtime}); err == nil || !strings.Contains(err.Error(), "--at") {
		t.Errorf("a snapshot without ctime: %v", err)
	}
	if _, err := snapshot.Open(snapshot.Spec{Path: filepath.Join(dir, "missing.rdb")}); err == nil || !strings.Contains(err.Error(), "no such file") {
		t.Errorf("a missing file: %v", err)
	}
}
