package snapshot

import (
	"errors"
	"fmt"
	"sort"

	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/inspect/glob"
	"github.com/idemctl/idemctl/inspect/rdb"
)

// snapLocks are the companion lock keys of a snapshot, found by a first
// pass over the file: a record and its lock can come in either order.
type snapLocks struct {
	byKey map[string]*snapLock
}

type snapLock struct {
	ks        int // the keyspace whose lock it is
	expireMs  int64
	typ       inspect.KeyType
	head      string // the value's first 1024 bytes (a time or a token), as the version script reads it
	length    int64
	digest    [20]byte
	hasRecord bool
}

// maxSnapLocks bounds the first pass's memory: locks are requests in
// flight, never the whole keyspace.
const maxSnapLocks = 4 << 20

// findLocks runs the first pass when a keyspace has a companion lock.
func (s *snapScan) findLocks() error {
	var with []int
	for i, ks := range s.kss {
		if ks.Schema.Lock != nil {
			with = append(with, i)
		}
	}
	if len(with) == 0 {
		return nil
	}
	if !s.src.Reopenable() {
		return errSnapshotLocks(s.kss[with[0]])
	}
	s.locks = &snapLocks{byKey: map[string]*snapLock{}}
	r, e, err := s.src.reader()
	if err != nil {
		return err
	}
	defer s.src.Close()
	var addErr error
	_, err = walkEntries(s.ctx, r, e, func(e *rdb.Entry) (bool, error) {
		if e.DB == s.src.spec.DB {
			addErr = s.locks.add(r, e, s.kss, with)
		}
		return addErr != nil, nil
	})
	switch {
	case addErr != nil:
		return addErr
	case err != nil && !errors.Is(err, s.ctx.Err()):
		return &Error{Name: s.src.spec.Path, Err: err}
	}
	return err
}

func (l *snapLocks) add(r *rdb.Reader, e *rdb.Entry, kss []*inspect.Keyspace, with []int) error {
	key := string(e.Key)
	for _, i := range with {
		ks := kss[i]
		if _, isLock := ks.Schema.Lock.RecordKey(key); !isLock || !glob.Match(ks.Match, key) {
			continue
		}
		if len(l.byKey) >= maxSnapLocks {
			return fmt.Errorf("more than %d lock keys: too many to match with their records", maxSnapLocks)
		}
		lk := &snapLock{ks: i, expireMs: e.ExpireMs, typ: keyTypeOf(e.Type)}
		if e.Type == rdb.TypeString {
			head, n, err := r.StringValue(1024)
			if err != nil && !errors.Is(err, rdb.ErrTooBig) {
				return &Error{Err: err}
			}
			lk.head, lk.length = string(head), n
			lk.digest, _ = r.ValueDigest()
		}
		l.byKey[key] = lk
		return nil
	}
	return nil
}

// pttl is the lock's TTL at the snapshot's time, as PTTL would answer:
// LockAbsent when it does not exist or had expired. Its record is seen.
func (l *snapLocks) pttl(lk *snapLock, atMs int64) int64 {
	if lk == nil {
		return inspect.LockAbsent
	}
	lk.hasRecord = true
	return lockPTTLAt(lk.expireMs, atMs)
}

// lockPTTLAt is a lock's PTTL at the snapshot's time.
func lockPTTLAt(expireMs, atMs int64) int64 {
	switch {
	case expireMs < 0:
		return -1
	case expireMs <= atMs:
		return inspect.LockAbsent
	}
	return expireMs - atMs
}

// orphans sends, for schemas that ask, a record for each live lock whose
// record does not exist, as a live scan's fetchOrphans does.
func (s *snapScan) orphans() error {
	if s.locks == nil {
		return nil
	}
	keys := make([]string, 0, len(s.locks.byKey))
	for k, lk := range s.locks.byKey {
		if !lk.hasRecord && s.kss[lk.ks].Schema.Lock.Orphans && (lk.expireMs < 0 || lk.expireMs > s.src.atMs) {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		lk := s.locks.byKey[k]
		pttl := int64(-1)
		if lk.expireMs >= 0 {
			pttl = lk.expireMs - s.src.atMs
		}
		s.batches[lk.ks] = append(s.batches[lk.ks], inspect.LockOnly(s.kss[lk.ks], k, pttl, lk.typ, lk.head[:min(len(lk.head), 64)], s.src.atMs))
		if s.opt.Versions {
			s.versions[lk.ks] = append(s.versions[lk.ks], lk.version())
		}
		s.covs[lk.ks].Records++
		if len(s.batches[lk.ks]) >= s.opt.Count {
			if err := s.send(lk.ks, nil); err != nil {
				return err
			}
		}
	}
	return nil
}
