package snapshot

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
	"unsafe"

	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/inspect/glob"
	"github.com/idemctl/idemctl/inspect/rdb"
)

// snapScan is one read of a snapshot for a set of keyspaces: each key of
// the database asked is matched against every keyspace's pattern, its
// value read once, and a record classified for each keyspace it matches,
// at the snapshot's time.
type snapScan struct {
	ctx      context.Context
	src      *Source
	kss      []*inspect.Keyspace
	opt      inspect.Options
	out      chan<- inspect.Batch
	covs     []inspect.Coverage
	batches  [][]inspect.Record
	versions [][]inspect.RecordVersion // with Options.Versions, beside batches
	locks    *snapLocks                // nil: no keyspace has a companion lock
	val      snapValue
	wanted   *wantedFields // the hash fields any keyspace reads
	readCap  int           // the largest read cap of the keyspaces
	matched  []int
	match    []starMatch        // each keyspace's pattern, beside kss
	cls      inspect.Classifier // the records' keys, fields and captures
	dbKeys   int64
}

// scanSnapshot is ScanAll over a snapshot: one coverage per keyspace,
// whose Node is the file. A fault in the file stops the read: the records
// before it were sent, and every coverage says where it stopped.
func scanSnapshot(ctx context.Context, src *Source, kss []*inspect.Keyspace, opt inspect.Options, out chan<- inspect.Batch) []inspect.Coverage {
	s := &snapScan{ctx: ctx, src: src, kss: kss, opt: opt, out: out, wanted: &wantedFields{},
		covs: make([]inspect.Coverage, len(kss)), batches: make([][]inspect.Record, len(kss)), versions: make([][]inspect.RecordVersion, len(kss))}
	started := time.Now()
	for i, ks := range kss {
		s.match = append(s.match, newStarMatch(ks.Match))
		s.covs[i] = inspect.Coverage{Keyspace: ks.Name, Match: ks.Match, Node: src.spec.Path, Role: "snapshot", Started: started, MemoryOff: opt.NoMemory}
		s.readCap = max(s.readCap, ks.ReadCap())
		for _, name := range ks.Schema.HashFields() {
			s.wanted.add(name, false)
		}
		if ks.Schema.Response != "" {
			s.wanted.add(ks.Schema.Response, true) // its length alone
		}
	}
	err := s.findLocks()
	if err == nil {
		err = s.read()
	}
	for i := range s.covs {
		c := &s.covs[i]
		c.Duration = time.Since(started)
		switch {
		case err != nil:
			c.Err = err
		case !c.Limited:
			c.Complete, c.Share = true, 1
		}
	}
	return s.covs
}

// read is the main pass over the file.
func (s *snapScan) read() error {
	r, e, err := s.src.reader()
	if err != nil {
		return err
	}
	defer s.src.Close()
	ended, err := walkEntries(s.ctx, r, e, func(e *rdb.Entry) (bool, error) { return s.entry(r, e) })
	switch {
	case errors.Is(err, s.ctx.Err()) && err != nil:
		return err
	case err != nil:
		return s.fault(err)
	case !ended:
		return s.flush(r) // every keyspace reached --max-keys
	}
	s.src.finish(r, s.dbKeys)
	if err := s.orphans(); err != nil {
		return err
	}
	return s.flush(r)
}

// walkEntries hands the file's entries, from first (one already read, or
// nil), to fn until the file ends (ended) or fn says stop, checking ctx
// every 4096 entries.
func walkEntries(ctx context.Context, r *rdb.Reader, first *rdb.Entry, fn func(*rdb.Entry) (stop bool, err error)) (ended bool, err error) {
	e := first
	for n := 0; ; n++ {
		if e == nil {
			if e, err = r.Next(); errors.Is(err, io.EOF) {
				return true, nil
			} else if err != nil {
				return false, err
			}
		}
		if n%4096 == 0 && ctx.Err() != nil {
			return false, ctx.Err()
		}
		if stop, err := fn(e); err != nil || stop {
			return false, err
		}
		e = nil
	}
}

func (s *snapScan) fault(err error) error {
	var fe *rdb.FormatError
	if errors.As(err, &fe) {
		s.flush(nil) // what was read before the fault is a partial result
		return &Error{Name: s.src.spec.Path, Err: err}
	}
	return err
}

// entry handles one key; stop: every keyspace reached --max-keys.
func (s *snapScan) entry(r *rdb.Reader, e *rdb.Entry) (stop bool, err error) {
	if e.DB != s.src.spec.DB {
		return false, nil
	}
	s.dbKeys++
	key := view(e.Key) // copied below, once a keyspace takes it
	s.matched = s.matched[:0]
	limited := 0
	for i, ks := range s.kss {
		c := &s.covs[i]
		if c.Limited {
			limited++
			continue
		}
		if !s.match[i].match(key) {
			continue
		}
		if s.opt.MaxKeys > 0 && c.Keys >= s.opt.MaxKeys {
			c.Limited = true
			limited++
			continue
		}
		c.Keys++
		if lk := ks.Schema.Lock; lk != nil {
			if _, isLock := lk.RecordKey(key); isLock {
				c.Companions++ // shown with its record, counted once
				continue
			}
		}
		if e.ExpireMs >= 0 && e.ExpireMs <= s.src.atMs {
			c.Expired++ // gone at the snapshot's time: counted, not shown
			continue
		}
		s.matched = append(s.matched, i)
	}
	if limited == len(s.kss) {
		return true, nil
	}
	if len(s.matched) == 0 {
		return false, nil
	}
	return false, s.records(r, e)
}

// records reads the value of a key some keyspaces matched and classifies
// a record for each.
func (s *snapScan) records(r *rdb.Reader, e *rdb.Entry) error {
	key := s.cls.Str(e.Key)
	s.val.cls = &s.cls
	if err := s.val.read(r, e, s.readCap, s.wanted, !s.opt.NoMemory, s.opt.Versions); err != nil {
		return err
	}
	for _, i := range s.matched {
		ks := s.kss[i]
		var lock *snapLock
		var lockPTTL int64
		if ks.Schema.Lock != nil {
			lock = s.locks.byKey[ks.Schema.Lock.LockKey(key)]
			lockPTTL = s.locks.pttl(lock, s.src.atMs)
		}
		if s.opt.Versions {
			s.versions[i] = append(s.versions[i], s.val.version(e.ExpireMs, s.src.atMs, lock, ks.Schema.Lock != nil))
		}
		s.batches[i] = append(s.batches[i], s.cls.Record(ks, key, &s.val.Value, e.ExpireMs, s.src.atMs, lockPTTL))
		s.covs[i].Records++
		if len(s.batches[i]) >= s.opt.Count {
			if err := s.send(i, r); err != nil {
				return err
			}
		}
	}
	return nil
}

// send hands keyspace i's batch over.
func (s *snapScan) send(i int, r *rdb.Reader) error {
	if len(s.batches[i]) == 0 {
		return nil
	}
	b := inspect.Batch{Keyspace: s.kss[i], Node: s.src.spec.Path, Records: s.batches[i], ServerTimeMs: s.src.atMs, Done: s.done(r)}
	s.batches[i] = make([]inspect.Record, 0, s.opt.Count)
	if s.opt.Versions {
		b.Versions, s.versions[i] = s.versions[i], make([]inspect.RecordVersion, 0, s.opt.Count)
	}
	select {
	case s.out <- b:
		return nil
	case <-s.ctx.Done():
		return s.ctx.Err()
	}
}

// flush sends what every keyspace holds.
func (s *snapScan) flush(r *rdb.Reader) error {
	for i := range s.batches {
		if err := s.send(i, r); err != nil {
			return err
		}
	}
	return nil
}

// done is the share of the file read; 0 for a pipe, whose size is unknown.
func (s *snapScan) done(r *rdb.Reader) float64 {
	if r == nil || s.src.size <= 0 {
		return 0
	}
	return min(float64(r.Stats().BytesRead)/float64(s.src.size), 1)
}

// starMatch is a pattern of literal parts and stars (atlasmart:ch23:idem:*,
// the usual kind) matched by prefix, suffix and the parts between in
// order, each found by strings.Index: several times faster than the glob
// walk over a million keys. Any other pattern goes to glob.Match.
type starMatch struct {
	pattern string
	parts   []string // the pattern split on '*'; nil: not stars alone
}

func newStarMatch(pattern string) starMatch {
	if strings.ContainsAny(pattern, "?[\\") {
		return starMatch{pattern: pattern}
	}
	return starMatch{pattern: pattern, parts: strings.Split(pattern, "*")}
}

func (m *starMatch) match(key string) bool {
	ps := m.parts
	switch len(ps) {
	case 0:
		return glob.Match(m.pattern, key)
	case 1:
		return key == ps[0]
	}
	first, last := ps[0], ps[len(ps)-1]
	if len(key) < len(first)+len(last) || !strings.HasPrefix(key, first) || !strings.HasSuffix(key, last) {
		return false
	}
	rest := key[len(first) : len(key)-len(last)]
	for _, p := range ps[1 : len(ps)-1] { // leftmost first leaves the most room for the rest
		i := strings.Index(rest, p)
		if i < 0 {
			return false
		}
		rest = rest[i+len(p):]
	}
	return true
}

// view is b as a string for a match, without a copy: valid only while
// the reader's buffer is (a million keys a second are matched, few kept).
func view(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

// typeOf maps the file's type names to the scan's.
func keyTypeOf(t rdb.Type) inspect.KeyType {
	switch t {
	case rdb.TypeString:
		return inspect.TypeString
	case rdb.TypeHash:
		return inspect.TypeHash
	case rdb.TypeList:
		return inspect.TypeList
	case rdb.TypeSet:
		return inspect.TypeSet
	case rdb.TypeZSet:
		return inspect.TypeZSet
	case rdb.TypeStream:
		return inspect.TypeStream
	}
	return inspect.TypeOther
}

// errSnapshotLocks refuses a pipe when a keyspace has companion locks.
func errSnapshotLocks(ks *inspect.Keyspace) error {
	return fmt.Errorf("keyspace %s keeps a lock key beside each record, and matching the two takes two passes over the file; standard input can be read once: save the stream to a file first (redis-cli --rdb FILE) and give its path", ks.Name)
}
