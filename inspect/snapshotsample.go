package inspect

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"time"
)

// maxDraftFields bounds the fields of a sampled hash kept for the draft:
// the live draft fetches only hashes of at most 64 fields.
const maxDraftFields = 65

// detectReadCap bounds each sampled value: a sample of 10,000 keys holds
// at most 160 MiB.
const detectReadCap = 16 << 10

// SnapshotSample is a snapshot's first keys matching a pattern, each
// value read once and kept: what detect reads instead of a live server.
type SnapshotSample struct {
	atMs  int64
	keys  []snapSampled
	byKey map[string]int
}

type snapSampled struct {
	key      string
	expireMs int64
	val      snapValue
	fields   int // a hash's field count, up to maxDraftFields
}

// SampleSnapshot reads the first n keys matching pattern in the file's
// database that are live at the snapshot's time, and closes src.
func SampleSnapshot(ctx context.Context, src *SnapshotSource, pattern string, n int, progress func(Progress)) (*SnapshotSample, error) {
	r, e, err := src.reader()
	if err != nil {
		return nil, err
	}
	defer src.Close()
	smp := &SnapshotSample{atMs: src.atMs, byKey: map[string]int{}}
	started := time.Now()
	for len(smp.keys) < n {
		if e == nil {
			if e, err = r.Next(); errors.Is(err, io.EOF) {
				break
			} else if err != nil {
				return nil, &SnapshotError{Name: src.spec.Path, Err: err}
			}
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if e.DB == src.spec.DB && (e.ExpireMs < 0 || e.ExpireMs > src.atMs) && MatchPattern(pattern, string(e.Key)) {
			var v snapValue
			if err := v.read(r, e, detectReadCap, nil, true, false); err != nil {
				return nil, &SnapshotError{Name: src.spec.Path, Err: err}
			}
			v.str = append([]byte(nil), v.str...) // the reader's buffer is reused
			smp.byKey[string(e.Key)] = len(smp.keys)
			smp.keys = append(smp.keys, snapSampled{key: string(e.Key), expireMs: e.ExpireMs, val: v, fields: len(v.fields)})
			if progress != nil {
				progress(Progress{Done: float64(len(smp.keys)) / float64(n), Records: int64(len(smp.keys)), Elapsed: time.Since(started)})
			}
		}
		e = nil
	}
	return smp, nil
}

// Keys are the sampled keys, in the file's order.
func (s *SnapshotSample) Keys() []string {
	keys := make([]string, len(s.keys))
	for i, k := range s.keys {
		keys[i] = k.key
	}
	return keys
}

// Types counts the sampled keys by Redis type.
func (s *SnapshotSample) Types() map[string]int {
	out := map[string]int{}
	for _, k := range s.keys {
		out[k.val.typ.String()]++
	}
	return out
}

// Records reads sampled keys as ks's records, as a scan of the snapshot
// would.
func (s *SnapshotSample) Records(ks *Keyspace, keys []string) []Record {
	out := make([]Record, 0, len(keys))
	for _, key := range keys {
		k := &s.keys[s.byKey[key]]
		o := k.val.observe(ks, key, k.expireMs, s.atMs)
		if lk := ks.Schema.Lock; lk != nil {
			o.lockPTTL = LockAbsent
			if i, ok := s.byKey[lk.LockKey(key)]; ok {
				o.lockPTTL = lockPTTLAt(s.keys[i].expireMs, s.atMs)
			}
		}
		out = append(out, classify(ks, &o, s.atMs))
	}
	return out
}

// Hashes are up to n sampled hashes of fewer than maxDraftFields fields,
// whole.
func (s *SnapshotSample) Hashes(n int) []map[string]string {
	var out []map[string]string
	for _, k := range s.keys {
		if len(out) == n {
			break
		}
		if k.val.typ == TypeHash && k.fields > 0 && k.fields < maxDraftFields {
			m := make(map[string]string, k.fields)
			for _, f := range k.val.fields {
				m[f.name] = f.value
			}
			out = append(out, m)
		}
	}
	return out
}

// JSONDocs are up to n sampled strings whose first 4 KiB hold a JSON
// object, decoded.
func (s *SnapshotSample) JSONDocs(n int) []map[string]any {
	var out []map[string]any
	for _, k := range s.keys {
		if len(out) == n {
			break
		}
		if k.val.typ == TypeString {
			var doc map[string]any
			head := k.val.str[:min(len(k.val.str), 4096)]
			if json.Unmarshal(head, &doc) == nil {
				out = append(out, doc)
			}
		}
	}
	return out
}
