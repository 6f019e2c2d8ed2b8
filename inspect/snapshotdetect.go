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

// snapSample is detect's sample read from a snapshot: the first keys
// matching the pattern, each value read once and kept.
type snapSample struct {
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

// DetectSnapshot is Detect on a snapshot: the first n keys matching
// pattern in the file's database, judged at the snapshot's time.
func DetectSnapshot(ctx context.Context, src *SnapshotSource, pattern string, n int, progress func(Progress)) (DetectResult, error) {
	smp, err := sampleSnapshot(ctx, src, pattern, n, progress)
	if err != nil {
		return DetectResult{Match: pattern, Types: map[string]int{}}, err
	}
	keys := make([]string, len(smp.keys))
	for i, k := range smp.keys {
		keys[i] = k.key
	}
	return detect(ctx, smp, pattern, keys)
}

func sampleSnapshot(ctx context.Context, src *SnapshotSource, pattern string, n int, progress func(Progress)) (*snapSample, error) {
	r, e, err := src.reader()
	if err != nil {
		return nil, err
	}
	defer src.Close()
	smp := &snapSample{atMs: src.atMs, byKey: map[string]int{}}
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

func (s *snapSample) types(context.Context) (map[string]int, error) {
	out := map[string]int{}
	for _, k := range s.keys {
		out[k.val.typ.String()]++
	}
	return out, nil
}

func (s *snapSample) records(_ context.Context, ks *Keyspace, keys []string) ([]Record, error) {
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
	return out, nil
}

func (s *snapSample) docs(_ context.Context, container string) []sampleDoc {
	var out []sampleDoc
	for _, k := range s.keys {
		if len(out) == draftSample {
			break
		}
		switch {
		case container == "hash" && k.val.typ == TypeHash && k.fields > 0 && k.fields < maxDraftFields:
			m := make(map[string]string, k.fields)
			for _, f := range k.val.fields {
				m[f.name] = f.value
			}
			out = append(out, sampleDoc{fields: m})
		case container == "string" && k.val.typ == TypeString:
			var doc map[string]any
			head := k.val.str[:min(len(k.val.str), 4096)]
			if json.Unmarshal(head, &doc) == nil {
				out = append(out, sampleDoc{json: doc})
			}
		}
	}
	return out
}
