package snapshot

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"time"

	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/inspect/glob"
)

// maxDraftFields bounds the fields of a sampled hash kept for the draft:
// the live draft fetches only hashes of at most 64 fields.
const maxDraftFields = 65

// detectReadCap bounds each sampled value: a sample of 10,000 keys holds
// at most 160 MiB.
const detectReadCap = 16 << 10

// Sample is a snapshot's first keys matching a pattern, each
// value read once and kept: what detect reads instead of a live server.
type Sample struct {
	atMs  int64
	cls   inspect.Classifier
	keys  []snapSampled
	byKey map[string]int
}

type snapSampled struct {
	key      string
	expireMs int64
	val      snapValue
	fields   int // a hash's field count, up to maxDraftFields
}

// ReadSample reads the first n keys matching pattern in the file's
// database that are live at the snapshot's time, and closes src.
func ReadSample(ctx context.Context, src *Source, pattern string, n int, progress func(inspect.Progress)) (*Sample, error) {
	r, e, err := src.reader()
	if err != nil {
		return nil, err
	}
	defer src.Close()
	smp := &Sample{atMs: src.atMs, byKey: map[string]int{}}
	started := time.Now()
	for len(smp.keys) < n {
		if e == nil {
			if e, err = r.Next(); errors.Is(err, io.EOF) {
				break
			} else if err != nil {
				return nil, &Error{Name: src.spec.Path, Err: err}
			}
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if e.DB == src.spec.DB && (e.ExpireMs < 0 || e.ExpireMs > src.atMs) && glob.Match(pattern, string(e.Key)) {
			var v snapValue
			if err := v.read(r, e, detectReadCap, nil, true, false); err != nil {
				return nil, &Error{Name: src.spec.Path, Err: err}
			}
			v.Str = append([]byte(nil), v.Str...) // the reader's buffer is reused
			smp.byKey[string(e.Key)] = len(smp.keys)
			smp.keys = append(smp.keys, snapSampled{key: string(e.Key), expireMs: e.ExpireMs, val: v, fields: len(v.Fields)})
			if progress != nil {
				progress(inspect.Progress{Done: float64(len(smp.keys)) / float64(n), Records: int64(len(smp.keys)), Elapsed: time.Since(started)})
			}
		}
		e = nil
	}
	return smp, nil
}

// Keys are the sampled keys, in the file's order.
func (s *Sample) Keys() []string {
	keys := make([]string, len(s.keys))
	for i, k := range s.keys {
		keys[i] = k.key
	}
	return keys
}

// Types counts the sampled keys by Redis type.
func (s *Sample) Types() map[string]int {
	out := map[string]int{}
	for _, k := range s.keys {
		out[k.val.Type.String()]++
	}
	return out
}

// Records reads sampled keys as ks's records, as a scan of the snapshot
// would.
func (s *Sample) Records(ks *inspect.Keyspace, keys []string) []inspect.Record {
	out := make([]inspect.Record, 0, len(keys))
	for _, key := range keys {
		k := &s.keys[s.byKey[key]]
		lockPTTL := int64(inspect.LockAbsent)
		if lk := ks.Schema.Lock; lk != nil {
			if i, ok := s.byKey[lk.LockKey(key)]; ok {
				lockPTTL = lockPTTLAt(s.keys[i].expireMs, s.atMs)
			}
		}
		out = append(out, s.cls.Record(ks, key, &k.val.Value, k.expireMs, s.atMs, lockPTTL))
	}
	return out
}

// Hashes are up to n sampled hashes of fewer than maxDraftFields fields,
// whole.
func (s *Sample) Hashes(n int) []map[string]string {
	var out []map[string]string
	for _, k := range s.keys {
		if len(out) == n {
			break
		}
		if k.val.Type == inspect.TypeHash && k.fields > 0 && k.fields < maxDraftFields {
			m := make(map[string]string, k.fields)
			for _, f := range k.val.Fields {
				m[f.Name] = f.Value
			}
			out = append(out, m)
		}
	}
	return out
}

// JSONDocs are up to n sampled strings whose first 4 KiB hold a JSON
// object, decoded.
func (s *Sample) JSONDocs(n int) []map[string]any {
	var out []map[string]any
	for _, k := range s.keys {
		if len(out) == n {
			break
		}
		if k.val.Type == inspect.TypeString {
			var doc map[string]any
			head := k.val.Str[:min(len(k.val.Str), 4096)]
			if json.Unmarshal(head, &doc) == nil {
				out = append(out, doc)
			}
		}
	}
	return out
}
