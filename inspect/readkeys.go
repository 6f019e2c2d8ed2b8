package inspect

import (
	"context"

	"github.com/redis/go-redis/v9"
)

// ReadKeys reads keys of ks from the live server as a scan reads a batch
// (the same record reader, caps and classifier), for a reader that learns
// which keys changed some other way (inspect/follow). The batch holds the
// keys that are records; a key asked for and absent from it was deleted or
// has expired. The keys should match ks.Match: a key that does not is
// read and classified all the same.
func ReadKeys(ctx context.Context, c redis.UniversalClient, ks *Keyspace, keys []string, opt Options) (Batch, error) {
	memOn := newTrue()
	memOn.Store(!opt.NoMemory)
	f := &fetcher{c: c, ks: ks, memOn: memOn, respAll: opt.ResponseSizes}
	got, err := f.fetch(ctx, keys)
	if err != nil {
		return Batch{}, err
	}
	return Batch{Keyspace: ks, Records: got.records, ServerTimeMs: got.nowMs}, nil
}

// EscapeGlob is a glob pattern (SCAN MATCH, PSUBSCRIBE) matching s alone.
func EscapeGlob(s string) string { return escapeGlob(s) }

// ReadLocks reads lock companion keys of ks (a schema with lock orphans)
// as a scan reads them: each lock whose record does not exist is a record
// of its own, keyed by the lock; a lock asked for and absent from the
// batch has its record, or is gone.
func ReadLocks(ctx context.Context, c redis.UniversalClient, ks *Keyspace, locks []string) (Batch, error) {
	f := &fetcher{c: c, ks: ks, memOn: newTrue()}
	got, err := f.fetchOrphans(ctx, locks)
	if err != nil {
		return Batch{}, err
	}
	return Batch{Keyspace: ks, Records: got.records, ServerTimeMs: got.nowMs}, nil
}
