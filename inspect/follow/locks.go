package follow

import (
	"context"
	"strings"

	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/inspect/glob"
)

// A schema with a lock companion (inspect.LockSpec) keeps a second key per
// record: a change to either changes what a scan shows of the record (its
// lock's TTL, a stale-if-missing lock gone), and with orphans a lock alone
// is a record of its own, keyed by the lock. So a changed lock key is read
// as its record, and with orphans every changed record's lock is read as a
// scan reads locks.

// split sorts changed keys into ks's record keys to read and, with
// orphans, lock keys to read as a scan's lock pass does.
func split(ks *inspect.Keyspace, keys []string) (records, locks []string) {
	lk := ks.Schema.Lock
	for _, k := range keys {
		rec := k
		if lk != nil {
			if r, isLock := lk.RecordKey(k); isLock && glob.Match(ks.Match, r) {
				rec = r
			}
		}
		if !glob.Match(ks.Match, rec) {
			continue
		}
		records = append(records, rec)
		if lk != nil && lk.Orphans {
			locks = append(locks, lk.LockKey(rec))
		}
	}
	return dedupe(records), dedupe(locks)
}

func dedupe(keys []string) []string {
	seen := make(map[string]bool, len(keys))
	out := keys[:0]
	for _, k := range keys {
		if !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	return out
}

// lockPrefix is the literal prefix of ks's lock keys ("" none), to track
// beside its records' prefix p.
func lockPrefix(ks *inspect.Keyspace, p string) string {
	lk := ks.Schema.Lock
	if lk == nil {
		return ""
	}
	tpl := lk.LockKey(lk.Strip + "\x00")
	head, _, _ := strings.Cut(tpl, "\x00")
	if rest, ok := strings.CutPrefix(p, lk.Strip); ok {
		return head + rest
	}
	return head
}

// readLocks reads lock keys in batches; false when a read failed (a
// re-sync is pending) or ctx ended.
func (f *Follower) readLocks(ctx context.Context, ks *inspect.Keyspace, locks []string) bool {
	for len(locks) > 0 {
		n := min(len(locks), f.opt.Scan.Count)
		b, err := inspect.ReadLocks(ctx, f.c, ks, locks[:n])
		f.setStats(func(s *Stats) { s.Reads += int64(n) })
		if err != nil {
			if ctx.Err() == nil {
				f.pend.missed("read", "reading changed lock keys failed: "+err.Error())
			}
			return false
		}
		b.Keyspace = ks
		if !f.apply(ctx, b, locks[:n]) {
			return false
		}
		locks = locks[n:]
	}
	return true
}
