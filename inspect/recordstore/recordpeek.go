package recordstore

import (
	"bytes"
	"encoding/binary"
	"strings"
	"unsafe"

	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/inspect/filter"
)

// Peeker is scratch space for reading a Store without allocating:
// a filter or a count over ten million records reads each through one.
type Peeker struct {
	r      inspect.Record
	buf    []byte
	lower  []byte // a key lower-cased for a search
	groups []string
}

// At returns a copy of the i-th record in append order, with strings of
// its own: keep it as long as you like.
func (s *Store) At(i int) *inspect.Record {
	var p Peeker
	return s.peek(i, &p, true, true)
}

// Peek returns the i-th record. Its strings alias p's scratch space: they
// change at the next Peek through p, so clone what you keep (a map key).
func (s *Store) Peek(i int, p *Peeker) *inspect.Record { return s.peek(i, p, true, true) }

// peek decodes the i-th record into p; the fingerprint and raw state only
// when full, the captures only when groups.
func (s *Store) peek(i int, p *Peeker, full, groups bool) *inspect.Record {
	sl := s.slot(i)
	if sl.bits&heldWide != 0 {
		p.r = *s.wide[int32(i)]
		return &p.r
	}
	r := &p.r
	s.unpackNumbers(sl, r)
	// The key first, then how much more scratch the other strings need,
	// then one buffer for them all: no string may alias a buffer that
	// later grows.
	var offs [maxCaptures + 1]int
	buf := s.appendKey(p.buf[:0], sl, offs[:])
	kl := len(buf)
	// After the key as held: the fingerprint, the raw state when it is not
	// interned, the captures (writeBlob's order).
	rest := s.bytes(sl)[sl.keyLen:]
	fp, fpText := rest[:sl.fpLen], int(sl.fpLen)
	if sl.bits&heldHexFP != 0 {
		fpText *= 2
	}
	rest = rest[sl.fpLen:]
	var raw []byte
	if sl.bits&heldState == 0 {
		v, n := binary.Uvarint(rest)
		raw, rest = rest[n:n+int(v)], rest[n+int(v):]
	}
	ownGroups := groups && sl.bits&(heldNoGroup|heldTpl) == 0
	need := kl
	if full {
		need += fpText + len(raw)
	}
	if ownGroups {
		need += copiedCaptures(rest)
	}
	buf = p.scratch(buf, need)
	r.Key = str(buf[:kl])
	w := kl
	if full {
		w = s.unpackText(r, sl, fp, raw, buf, w)
	}
	if groups && sl.bits&heldTpl != 0 {
		r.Groups = p.templateCaptures(r.Key, len(r.Keyspace.Template.Names()), offs[:])
	}
	if ownGroups {
		r.Groups = p.ownCaptures(r.Key, rest, buf[w:])
	}
	return r
}

// unpackNumbers sets r to the slot's numbers, state, type, flags and
// keyspace, every string empty.
func (s *Store) unpackNumbers(sl *slot, r *inspect.Record) {
	*r = inspect.Record{
		Keyspace: s.keyspaces[sl.ks], TTLms: s.num(sl.ttl, sl, heldBigTTL), MemoryBytes: int64(sl.mem), AgeMs: s.num(sl.age, sl, heldBigAge),
		ResponseLen: int64(sl.resp), LockTTLms: int64(sl.lock), Flags: inspect.Flags(sl.flags), Status: int32(sl.status),
		State: inspect.State(sl.meta & 7), Type: inspect.KeyType(sl.meta >> 3 & 7), AgeSource: inspect.AgeSource(sl.meta >> 6),
	}
	if sl.dl != noDeadline {
		r.DeadlineMs = s.dlBase + int64(sl.dl)
	}
}

// scratch is buf with room for need bytes, kept as p's buffer for the
// next Peek.
func (p *Peeker) scratch(buf []byte, need int) []byte {
	if cap(buf) < need {
		buf = append(make([]byte, 0, need), buf...)
	}
	p.buf = buf
	return buf[:need]
}

// unpackText writes the fingerprint (as hex again when held as the bytes
// it spells) and the raw state (when not interned) to buf from w, where
// r's strings point; it returns where they end.
func (s *Store) unpackText(r *inspect.Record, sl *slot, fp, raw, buf []byte, w int) int {
	if sl.bits&heldHexFP != 0 {
		for j, c := range fp {
			buf[w+2*j], buf[w+2*j+1] = hexDigits[c>>4], hexDigits[c&15]
		}
		r.Fingerprint = str(buf[w : w+2*len(fp)])
		w += 2 * len(fp)
	} else {
		r.Fingerprint = str(buf[w : w+copy(buf[w:], fp)])
		w += len(fp)
	}
	if sl.bits&heldState != 0 {
		r.RawState = s.states[sl.rs]
		return w
	}
	r.RawState = str(buf[w : w+copy(buf[w:], raw)])
	return w + len(raw)
}

// templateCaptures are the n captures of a key held in its template's
// form, at the bounds appendKey found (offs).
func (p *Peeker) templateCaptures(key string, n int, offs []int) []string {
	g := p.groupSlice(n)
	for j := range g {
		g[j] = key[offs[2*j]:offs[2*j+1]]
	}
	return g
}

// ownCaptures decodes what writeCaptures wrote: a capture inside the key
// becomes a slice of it, a copy is written to buf.
func (p *Peeker) ownCaptures(key string, held, buf []byte) []string {
	cnt, n := binary.Uvarint(held)
	held = held[n:]
	g := p.groupSlice(int(cnt))
	w := 0
	for j := range g {
		off, n := binary.Uvarint(held)
		ln, m := binary.Uvarint(held[n:])
		held = held[n+m:]
		if off > 0 {
			g[j] = key[off-1 : off-1+ln]
			continue
		}
		g[j] = str(buf[w : w+copy(buf[w:], held[:ln])])
		w += int(ln)
		held = held[ln:]
	}
	return g
}

// groupSlice is p's captures slice at length n, never nil (nil is "no
// captures").
func (p *Peeker) groupSlice(n int) []string {
	if p.groups == nil || cap(p.groups) < n {
		p.groups = make([]string, n)
	}
	return p.groups[:n:n]
}

// appendKey appends the slot's key to dst. For a key held in its
// template's form it sets offs[2j], offs[2j+1] to capture j's bounds.
func (s *Store) appendKey(dst []byte, sl *slot, offs []int) []byte {
	held := s.bytes(sl)[:sl.keyLen]
	switch {
	case sl.bits&heldTpl != 0:
		return appendHeld(s.keyspaces[sl.ks].Template, dst, held, s.dict, offs)
	case sl.bits&heldPrefix != 0:
		dst = append(dst, s.prefixes[sl.ks]...)
	}
	return append(dst, held...)
}

// copiedCaptures is how many bytes the captures held as copies take.
func copiedCaptures(rest []byte) int {
	cnt, n := binary.Uvarint(rest)
	rest = rest[n:]
	total := 0
	for range cnt {
		off, n := binary.Uvarint(rest)
		ln, m := binary.Uvarint(rest[n:])
		rest = rest[n+m:]
		if off == 0 {
			total += int(ln)
			rest = rest[ln:]
		}
	}
	return total
}

// str is b as a string, without a copy: b must not change while it is used.
func str(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(unsafe.SliceData(b), len(b))
}

const hexDigits = "0123456789abcdef"

// State is the i-th record's canonical state.
func (s *Store) State(i int) inspect.State { return inspect.State(s.slot(i).meta & 7) }

// Flags is the i-th record's flags.
func (s *Store) Flags(i int) inspect.Flags { return inspect.Flags(s.slot(i).flags) }

// AgeMs is the i-th record's age (-1 unknown).
func (s *Store) AgeMs(i int) int64 {
	if sl := s.slot(i); sl.bits&heldWide == 0 {
		return s.num(sl.age, sl, heldBigAge)
	}
	return s.wide[int32(i)].AgeMs
}

// TTLms is the i-th record's TTL (-1 none, TTLUnknown).
func (s *Store) TTLms(i int) int64 {
	if sl := s.slot(i); sl.bits&heldWide == 0 {
		return s.num(sl.ttl, sl, heldBigTTL)
	}
	return s.wide[int32(i)].TTLms
}

// MemoryBytes is the i-th record's memory (-1 unknown).
func (s *Store) MemoryBytes(i int) int64 {
	if sl := s.slot(i); sl.bits&heldWide == 0 {
		return int64(sl.mem)
	}
	return s.wide[int32(i)].MemoryBytes
}

// CompareKeys orders the i-th and j-th records by key, as strings compare.
// Keys that dropped the same prefix compare on the bytes held. Like every
// comparison it uses the store's scratch: one goroutine at a time.
func (s *Store) CompareKeys(i, j int) int {
	a, b := s.slot(i), s.slot(j)
	const plain = heldWide | heldTpl
	if (a.bits|b.bits)&plain == 0 && a.bits&heldPrefix == b.bits&heldPrefix &&
		(a.bits&heldPrefix == 0 || s.prefixes[a.ks] == s.prefixes[b.ks]) {
		return bytes.Compare(s.bytes(a)[:a.keyLen], s.bytes(b)[:b.keyLen])
	}
	return strings.Compare(s.peek(i, &s.cmp[0], false, false).Key, s.peek(j, &s.cmp[1], false, false).Key)
}

// CompareFingerprints orders the i-th and j-th records by fingerprint, as
// strings compare. Two held as hex bytes compare on the bytes: hex digits
// keep the order of the values they spell.
func (s *Store) CompareFingerprints(i, j int) int {
	a, b := s.slot(i), s.slot(j)
	if (a.bits|b.bits)&heldWide == 0 && a.bits&heldHexFP == b.bits&heldHexFP {
		return bytes.Compare(s.bytes(a)[a.keyLen:][:a.fpLen], s.bytes(b)[b.keyLen:][:b.fpLen])
	}
	return strings.Compare(s.peek(i, &s.cmp[0], true, false).Fingerprint, s.peek(j, &s.cmp[1], true, false).Fingerprint)
}

// KeyIs reports whether the i-th record's key is key.
func (s *Store) KeyIs(i int, key string) bool {
	sl := s.slot(i)
	switch {
	case sl.bits&heldWide != 0:
		return s.wide[int32(i)].Key == key
	case sl.bits&heldTpl != 0:
		return s.peek(i, &s.cmp[0], false, false).Key == key
	}
	pre := ""
	if sl.bits&heldPrefix != 0 {
		pre = s.prefixes[sl.ks]
	}
	held := s.bytes(sl)[:sl.keyLen]
	return len(key) == len(pre)+len(held) && strings.HasPrefix(key, pre) && key[len(pre):] == string(held)
}

// Match reports whether the i-th record passes f, reading only what f
// tests: the packed state and flags, then the key (and captures) for a
// search.
func (s *Store) Match(f *filter.Filter, i int, p *Peeker) bool {
	sl := s.slot(i)
	if sl.bits&heldWide != 0 {
		return f.Match(s.wide[int32(i)])
	}
	fl := inspect.Flags(sl.flags)
	if f.States != 0 && !f.States.Has(inspect.State(sl.meta&7)) || f.Stale && !fl.Has(inspect.FlagStale) || !fl.Has(f.Flags) {
		return false
	}
	if f.Search.Empty() {
		return true
	}
	if f.Search.ReadsCaptures() {
		return f.Search.Match(s.peek(i, p, false, true))
	}
	// The key alone, assembled in p's scratch: no record is decoded.
	p.buf = s.appendKey(p.buf[:0], sl, nil)
	ok, lower := f.Search.MatchKey(str(p.buf), inspect.State(sl.meta&7), fl, p.lower)
	p.lower = lower
	return ok
}
