package follow

import (
	"container/heap"
	"hash/maphash"

	"github.com/idemctl/idemctl/inspect"
)

// entry is what the view keeps of one record, packed in 8 bytes (the
// key's hash being the map's key, 16 bytes a slot in all): when it turns
// stale (40 bits of ms since the follower started: 34 years; 0 never),
// the pass that last saw it (12 bits, compared for equality only), its
// keyspace (6 bits), state (3) and stale flag (1). The record itself is
// kept only while it is processing and not yet stale (the stale heap).
type entry uint64

const (
	genBits   = 12
	genMask   = 1<<genBits - 1
	maxKS     = 64
	staleBits = 40
)

func pack(staleAt int64, gen uint32, ks uint8, st inspect.State, stale bool) entry {
	e := uint64(staleAt)&(1<<staleBits-1) | uint64(gen&genMask)<<staleBits |
		uint64(ks&(maxKS-1))<<(staleBits+genBits) | uint64(st&7)<<(staleBits+genBits+6)
	if stale {
		e |= 1 << 63
	}
	return entry(e)
}

func (e entry) staleAt() int64       { return int64(e & (1<<staleBits - 1)) }
func (e entry) gen() uint32          { return uint32(e>>staleBits) & genMask }
func (e entry) ks() uint8            { return uint8(e>>(staleBits+genBits)) & (maxKS - 1) }
func (e entry) state() inspect.State { return inspect.State(e>>(staleBits+genBits+6)) & 7 }
func (e entry) stale() bool          { return e>>63 == 1 }

// view is the followed keyspace: one entry per record, the processing
// records' stale deadlines in a heap, and, with keepKeys, each key (for
// a re-sync to name what it removes).
type view struct {
	seed  maphash.Seed
	m     map[uint64]entry
	keys  map[uint64]string // nil unless keepKeys
	timer staleHeap
	gen   uint32
}

func newView(keepKeys bool) *view {
	v := &view{seed: maphash.MakeSeed(), m: make(map[uint64]entry)}
	if keepKeys {
		v.keys = make(map[uint64]string)
	}
	return v
}

func (v *view) hash(ks uint8, key string) uint64 {
	return maphash.String(v.seed, key) ^ uint64(ks)*0x9e3779b97f4a7c15
}

func (e entry) summary() Summary { return Summary{Known: true, State: e.state(), Stale: e.stale()} }

// upsert records rec (of keyspace ks) read at nowRel (ms since start)
// when the server's clock said serverMs; it returns what was there.
func (v *view) upsert(ks uint8, rec *inspect.Record, nowRel, serverMs int64) Summary {
	h := v.hash(ks, rec.Key)
	old, had := v.m[h]
	at := staleAt(rec, nowRel, serverMs)
	if at > 0 {
		heap.Push(&v.timer, staleItem{at: at, h: h, rec: *rec, readRel: nowRel})
	}
	v.m[h] = pack(at, v.gen, ks, rec.State, rec.Stale())
	if v.keys != nil {
		v.keys[h] = rec.Key
	}
	if !had {
		return Summary{}
	}
	return old.summary()
}

// staleAt is when a processing record not yet stale turns stale, in ms
// since start (0: it never does by the clock alone). classify's rule:
// stale once the server's clock passes a stored deadline, or the age
// passes the processing timeout.
func staleAt(r *inspect.Record, nowRel, serverMs int64) int64 {
	if r.State != inspect.StateProcessing || r.Stale() {
		return 0
	}
	if r.DeadlineMs > 0 {
		return nowRel + max(r.DeadlineMs-serverMs, 0) + 1
	}
	timeout := r.Keyspace.ProcessingTimeout.Milliseconds()
	if timeout > 0 && r.AgeMs >= 0 {
		return nowRel + max(timeout-r.AgeMs, 0) + 1
	}
	return 0
}

// remove drops key; ok=false when the view did not hold it.
func (v *view) remove(ks uint8, key string) (Summary, bool) {
	h := v.hash(ks, key)
	old, had := v.m[h]
	if !had {
		return Summary{}, false
	}
	delete(v.m, h)
	if v.keys != nil {
		delete(v.keys, h)
	}
	return old.summary(), true
}

// removed is an entry a re-sync dropped.
type removed struct {
	key string // "" without keepKeys
	ks  uint8
	was Summary
}

// sweep drops every entry the pass v.gen did not see.
func (v *view) sweep() []removed {
	var out []removed
	for h, e := range v.m {
		if e.gen() == v.gen&genMask {
			continue
		}
		r := removed{ks: e.ks(), was: e.summary()}
		if v.keys != nil {
			r.key = v.keys[h]
			delete(v.keys, h)
		}
		delete(v.m, h)
		out = append(out, r)
	}
	return out
}

// due pops the records whose deadline is at or before nowRel and that are
// still processing and not stale in the view, marking them stale.
func (v *view) due(nowRel int64) []staleItem {
	var out []staleItem
	for v.timer.Len() > 0 && v.timer[0].at <= nowRel {
		it := heap.Pop(&v.timer).(staleItem)
		e, ok := v.m[it.h]
		if !ok || e.staleAt() != it.at || e.stale() || e.state() != inspect.StateProcessing {
			continue // changed or gone since: this deadline no longer holds
		}
		v.m[it.h] = e | 1<<63
		out = append(out, it)
	}
	return out
}

// next is the earliest deadline in the heap (ok=false: none).
func (v *view) next() (int64, bool) {
	if v.timer.Len() == 0 {
		return 0, false
	}
	return v.timer[0].at, true
}

// staleItem is a processing record waiting for its deadline.
type staleItem struct {
	at, readRel int64
	h           uint64
	rec         inspect.Record
}

type staleHeap []staleItem

func (s staleHeap) Len() int           { return len(s) }
func (s staleHeap) Less(i, j int) bool { return s[i].at < s[j].at }
func (s staleHeap) Swap(i, j int)      { s[i], s[j] = s[j], s[i] }
func (s *staleHeap) Push(x any)        { *s = append(*s, x.(staleItem)) }
func (s *staleHeap) Pop() any {
	old := *s
	it := old[len(old)-1]
	old[len(old)-1] = staleItem{}
	*s = old[:len(old)-1]
	return it
}
