// Package recordstore holds scanned records packed off the Go heap for a
// long-lived reader (the TUI, and the benchmark that measures what it
// holds): a fixed slot of numbers per record, its bytes in a chunked
// arena, a key that fits its keyspace's template held as its captures.
// Records go in as inspect's Records and come out as Records again, or
// are filtered, sorted and counted in place.
//
// Floor 1 of ARCHITECTURE.md, the read engine: it may import inspect and
// the foundations (floor 0), never the write path, a screen or the
// command layer.
package recordstore

import (
	"encoding/binary"
	"math"
	"runtime"
	"strings"
	"unsafe"

	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/internal/offheap"
)

// Store holds records for a long-lived reader (the TUI) in compact
// form: per record a fixed 40-byte slot of packed numbers, and its bytes
// (the key without its keyspace's literal prefix, the fingerprint as raw
// bytes when it is lowercase hex, captures as offsets into the key) in a
// chunked byte arena. Slots and arena are pointer-free and live off the Go
// heap (internal/offheap), so the collector neither scans them nor
// doubles them with GOGC headroom, and growth never copies what is held. A record that
// does not fit the packed widths is kept whole in a side table, so nothing
// is lost. Append-only: indices stay valid until Reset. Match and Peek,
// each with its own Peeker, may run in parallel; the comparisons and KeyIs
// use the store's scratch, one goroutine at a time. Do not copy a store:
// its memory is freed when the original is dropped.
type Store struct {
	slots     [][]slot
	arena     [][]byte // blocks of arenaBlock bytes
	used      int      // bytes used in the last arena block
	n         int
	keyspaces []*inspect.Keyspace // slot.ks-1 indexes it; 0 is no keyspace
	prefixes  []string            // each keyspace's literal key prefix
	states    []string            // interned raw states, slot.rs indexes it
	stateIdx  map[string]uint8
	wide      map[int32]*inspect.Record // records that do not fit a slot
	big       []int64                   // TTLs and ages beyond an int32 of ms (a 30-day retention): 8 B more, not a side-table record
	dlBase    int64                     // deadlines are held relative to the first one
	mem       *blocks
	dict      []string          // capture values shared by keys held in template form
	dictIdx   map[string]uint32 // their indices
	dictAdded map[int]int       // values each column added to dict
	tpl       []byte            // scratch: a key in template form
	check     []byte            // scratch: that key rebuilt
	cmp       [2]Peeker         // scratch for comparisons
	garbage   int               // records Set and SwapRemove left in the arena
}

// slot is one record's packed fields. Numbers are exact: a value outside
// its width sends the record to the side table.
type slot struct {
	off    uint32 // arena offset of the record's bytes, low 32 bits
	offHi  uint8  // and the high 8
	meta   uint8  // state | type<<3 | age source<<6
	ks     uint8  // keyspace index + 1; 0: none
	bits   uint8  // held* bits
	keyLen uint16 // key bytes held (the prefix dropped when heldPrefix)
	fpLen  uint8  // fingerprint bytes held
	rs     uint8  // interned raw state index, when heldState
	flags  uint16
	status int16
	ttl    int32
	age    int32
	mem    int32
	resp   int32
	dl     int32 // deadline - dlBase; noDeadline: none
	lock   int32
}

const (
	heldPrefix  = 1 << iota // the key starts with its keyspace's prefix, not held
	heldHexFP               // the fingerprint is held as the bytes its hex spells
	heldState               // the raw state is interned (rs)
	heldNoGroup             // Groups is nil
	heldWide                // the whole record is in the side table
	heldTpl                 // the key is held in its template's form (recordtemplate.go); captures follow from it
	heldBigTTL              // slot.ttl indexes big: a TTL beyond ±24.8 days
	heldBigAge              // slot.age indexes big
)

const (
	chunkShift = 12 // 4,096 slots (160 KiB) per chunk
	chunkSize  = 1 << chunkShift
	blockShift = 22 // 4 MiB arena blocks
	arenaBlock = 1 << blockShift
	maxBlob    = arenaBlock / 16 // larger records go to the side table
	maxStates  = 255
	noDeadline = math.MinInt32
	slotBytes  = int(unsafe.Sizeof(slot{}))
)

// blocks is the store's off-heap memory; a cleanup frees it when the store
// is dropped without Reset.
type blocks struct{ list [][]byte }

func (b *blocks) free() {
	for _, m := range b.list {
		offheap.Free(m)
	}
	b.list = nil
}

// Len is the number of records held.
func (s *Store) Len() int { return s.n }

func (s *Store) slot(i int) *slot { return &s.slots[i>>chunkShift][i&(chunkSize-1)] }

// Reset drops every record and frees the memory they held.
func (s *Store) Reset() {
	if s.mem != nil {
		s.mem.free()
	}
	*s = Store{}
}

// Capacity is how many records the allocated slots can hold.
func (s *Store) Capacity() int { return len(s.slots) * chunkSize }

// SlotBytes is what the allocated slots take.
func (s *Store) SlotBytes() int64 { return int64(s.Capacity()) * int64(slotBytes) }

func (s *Store) alloc(n int) []byte {
	if s.mem == nil {
		// The cleanup holds the list, not the store, so the store can die.
		s.mem = &blocks{}
		h := &s.mem.list
		runtime.AddCleanup(s, func(l *[][]byte) { (&blocks{list: *l}).free() }, h)
	}
	b := offheap.Alloc(n)
	s.mem.list = append(s.mem.list, b)
	return b
}

// Append copies a batch in. Nothing held aliases b.
func (s *Store) Append(b []inspect.Record) {
	for i := range b {
		s.push(&b[i])
	}
}

func (s *Store) push(r *inspect.Record) {
	if s.n&(chunkSize-1) == 0 {
		c := s.alloc(chunkSize * slotBytes)
		s.slots = append(s.slots, unsafe.Slice((*slot)(unsafe.Pointer(&c[0])), chunkSize))
	}
	sl := s.slot(s.n)
	*sl = slot{}
	s.fill(s.n, r, sl)
	s.n++
}

// fill packs r into slot i, or, when it does not fit, into the side table.
func (s *Store) fill(i int, r *inspect.Record, sl *slot) {
	if !s.pack(r, sl) {
		if s.wide == nil {
			s.wide = map[int32]*inspect.Record{}
		}
		w := cloneRecord(r)
		s.wide[int32(i)] = &w
		*sl = slot{bits: heldWide, meta: uint8(r.State) | uint8(r.Type)<<3 | uint8(r.AgeSource)<<6, flags: uint16(r.Flags)}
	}
}

// cloneRecord is r with strings of its own.
func cloneRecord(r *inspect.Record) inspect.Record {
	w := *r
	w.Key, w.Fingerprint, w.RawState = strings.Clone(r.Key), strings.Clone(r.Fingerprint), strings.Clone(r.RawState)
	if r.Groups != nil {
		w.Groups = make([]string, len(r.Groups))
		for j, g := range r.Groups {
			w.Groups[j] = strings.Clone(g)
		}
	}
	return w
}

// fit32 reports whether v is exactly an int32.
func fit32(v int64) bool { return v >= math.MinInt32 && v <= math.MaxInt32 }

// packNum is v as a slot's int32, or, when it does not fit, its index in
// big with bit set on the slot. (Should pack then fail, the entry stays
// unused: 8 bytes.)
func (s *Store) packNum(v int64, sl *slot, bit uint8) int32 {
	if fit32(v) {
		return int32(v)
	}
	sl.bits |= bit
	s.big = append(s.big, v)
	return int32(len(s.big) - 1)
}

// num reads back what packNum packed.
func (s *Store) num(v int32, sl *slot, bit uint8) int64 {
	if sl.bits&bit != 0 {
		return s.big[v]
	}
	return int64(v)
}

// pack fills sl and writes r's bytes to the arena; false when r does not
// fit (sl and the arena are then left as if untouched).
func (s *Store) pack(r *inspect.Record, sl *slot) bool {
	if !s.packNumbers(r, sl) || !s.packKeyspace(r.Keyspace, sl) {
		return false
	}
	key := s.packKey(r, sl)
	if !packLengths(r.Fingerprint, key, sl) {
		return false
	}
	if idx, ok := s.intern(r.RawState); ok {
		sl.bits |= heldState
		sl.rs = idx
	}
	if r.Groups == nil {
		sl.bits |= heldNoGroup
	}
	size := blobSize(r, key, sl)
	if size > maxBlob {
		return false
	}
	writeBlob(s.reserve(size, sl), r, key, sl)
	return true
}

// packNumbers fills sl's numbers, state, type and flags; false when one
// does not fit its width.
func (s *Store) packNumbers(r *inspect.Record, sl *slot) bool {
	if !fit32(r.MemoryBytes) || !fit32(r.ResponseLen) || !fit32(r.LockTTLms) ||
		r.Status < math.MinInt16 || r.Status > math.MaxInt16 || r.State >= 8 || r.Type >= 8 || r.AgeSource >= 4 {
		return false
	}
	sl.mem, sl.resp, sl.lock = int32(r.MemoryBytes), int32(r.ResponseLen), int32(r.LockTTLms)
	sl.ttl, sl.age = s.packNum(r.TTLms, sl, heldBigTTL), s.packNum(r.AgeMs, sl, heldBigAge)
	sl.status, sl.flags = int16(r.Status), uint16(r.Flags)
	sl.meta = uint8(r.State) | uint8(r.Type)<<3 | uint8(r.AgeSource)<<6
	sl.dl = noDeadline
	if r.DeadlineMs == 0 {
		return true
	}
	if s.dlBase == 0 {
		s.dlBase = r.DeadlineMs
	}
	d := r.DeadlineMs - s.dlBase
	if !fit32(d) || d == noDeadline {
		return false
	}
	sl.dl = int32(d)
	return true
}

// packKey is the key as it will be held: in its template's form (the
// captures then follow from it), without its keyspace's prefix, or whole.
func (s *Store) packKey(r *inspect.Record, sl *slot) string {
	if tpl, ok := s.encodeHeld(s.tpl[:0], r, sl.ks); ok {
		s.tpl = tpl
		sl.bits |= heldTpl
		return str(tpl)
	}
	if p := s.prefixes[sl.ks]; p != "" && strings.HasPrefix(r.Key, p) {
		sl.bits |= heldPrefix
		return r.Key[len(p):]
	}
	return r.Key
}

// packLengths sets the held key's and fingerprint's lengths (a lowercase
// hex fingerprint is held as the bytes it spells, half as many); false
// when one does not fit its width.
func packLengths(fp, key string, sl *slot) bool {
	if isLowerHex(fp) {
		sl.bits |= heldHexFP
		sl.fpLen = uint8(len(fp) / 2) // isLowerHex bounds it
	} else if len(fp) <= math.MaxUint8 {
		sl.fpLen = uint8(len(fp))
	} else {
		return false
	}
	if len(key) > math.MaxUint16 {
		return false
	}
	sl.keyLen = uint16(len(key))
	return true
}

// blobSize is how many bytes writeBlob writes for r.
func blobSize(r *inspect.Record, key string, sl *slot) int {
	size := len(key) + int(sl.fpLen)
	if sl.bits&heldState == 0 {
		size += uvarintLen(uint64(len(r.RawState))) + len(r.RawState)
	}
	if r.Groups != nil && sl.bits&heldTpl == 0 {
		size += capturesSize(r.Groups, r.Key)
	}
	return size
}

// writeBlob writes the record's bytes: the key as held, the fingerprint,
// the raw state when it is not interned, and the captures when Groups is
// not nil and the key is not held in its template's form.
func writeBlob(blob []byte, r *inspect.Record, key string, sl *slot) {
	w := copy(blob, key)
	if sl.bits&heldHexFP != 0 {
		w += hexDecode(blob[w:], r.Fingerprint)
	} else {
		w += copy(blob[w:], r.Fingerprint)
	}
	if sl.bits&heldState == 0 {
		w += binary.PutUvarint(blob[w:], uint64(len(r.RawState)))
		w += copy(blob[w:], r.RawState)
	}
	if r.Groups != nil && sl.bits&heldTpl == 0 {
		writeCaptures(blob[w:], r.Groups, r.Key)
	}
}

// capturesSize is how many bytes writeCaptures writes for groups.
func capturesSize(groups []string, key string) int {
	size := uvarintLen(uint64(len(groups)))
	for _, g := range groups {
		if off, ok := offsetIn(g, key); ok {
			size += uvarintLen(uint64(off)+1) + uvarintLen(uint64(len(g)))
		} else {
			size += 1 + uvarintLen(uint64(len(g))) + len(g)
		}
	}
	return size
}

// writeCaptures writes the captures' count, then each as its offset in
// the key + 1 and its length when it lies inside the key (a scan's
// captures do: no bytes of its own), else as 0, its length and its bytes.
func writeCaptures(blob []byte, groups []string, key string) {
	var tail [2 * binary.MaxVarintLen64]byte
	w := binary.PutUvarint(blob, uint64(len(groups)))
	for _, g := range groups {
		if off, ok := offsetIn(g, key); ok {
			t := binary.PutUvarint(tail[:], uint64(off)+1)
			t += binary.PutUvarint(tail[t:], uint64(len(g)))
			w += copy(blob[w:], tail[:t])
		} else {
			blob[w] = 0
			w++
			w += binary.PutUvarint(blob[w:], uint64(len(g)))
			w += copy(blob[w:], g)
		}
	}
}

// packKeyspace sets sl.ks, registering ks the first time.
func (s *Store) packKeyspace(ks *inspect.Keyspace, sl *slot) bool {
	if len(s.keyspaces) == 0 {
		s.keyspaces, s.prefixes = []*inspect.Keyspace{nil}, []string{""}
	}
	for i, k := range s.keyspaces {
		if k == ks {
			sl.ks = uint8(i)
			return true
		}
	}
	if len(s.keyspaces) > math.MaxUint8 {
		return false
	}
	sl.ks = uint8(len(s.keyspaces))
	s.keyspaces = append(s.keyspaces, ks)
	s.prefixes = append(s.prefixes, ks.Template.Prefix())
	return true
}

// reserve returns size bytes of arena for the slot's record and sets its
// offset. A record never spans blocks.
func (s *Store) reserve(size int, sl *slot) []byte {
	if len(s.arena) == 0 || s.used+size > arenaBlock {
		s.arena = append(s.arena, s.alloc(arenaBlock))
		s.used = 0
	}
	off := uint64(len(s.arena)-1)<<blockShift | uint64(s.used)
	sl.off, sl.offHi = uint32(off), uint8(off>>32)
	b := s.arena[len(s.arena)-1][s.used : s.used+size : s.used+size]
	s.used += size
	return b
}

// bytes is the arena from the slot's record on.
func (s *Store) bytes(sl *slot) []byte {
	off := uint64(sl.offHi)<<32 | uint64(sl.off)
	return s.arena[off>>blockShift][off&(arenaBlock-1):]
}

// intern returns the index of a raw state in the shared table, for the few
// distinct values a keyspace has; false once the table is full.
func (s *Store) intern(v string) (uint8, bool) {
	if i, ok := s.stateIdx[v]; ok {
		return i, true
	}
	if len(s.states) >= maxStates {
		return 0, false
	}
	if s.stateIdx == nil {
		s.stateIdx = map[string]uint8{}
	}
	h := strings.Clone(v)
	s.stateIdx[h] = uint8(len(s.states))
	s.states = append(s.states, h)
	return uint8(len(s.states) - 1), true
}

// offsetIn is where g's bytes start inside key, if they lie within it.
func offsetIn(g, key string) (int, bool) {
	if len(g) == 0 {
		return 0, false // held as an empty copy
	}
	off := int(uintptr(unsafe.Pointer(unsafe.StringData(g))) - uintptr(unsafe.Pointer(unsafe.StringData(key))))
	return off, off >= 0 && off+len(g) <= len(key)
}

func uvarintLen(v uint64) int {
	n := 1
	for v >= 0x80 {
		v >>= 7
		n++
	}
	return n
}

// isLowerHex reports whether fp is lowercase hex of even length, at most
// 255 bytes once decoded.
func isLowerHex(fp string) bool {
	if len(fp) == 0 || len(fp)%2 != 0 || len(fp) > 2*math.MaxUint8 {
		return false
	}
	for i := 0; i < len(fp); i++ {
		if c := fp[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

func hexVal(c byte) byte {
	if c <= '9' {
		return c - '0'
	}
	return c - 'a' + 10
}

// hexDecode writes the bytes lowercase hex h spells into dst.
func hexDecode(dst []byte, h string) int {
	for i := 0; i+1 < len(h); i += 2 {
		dst[i/2] = hexVal(h[i])<<4 | hexVal(h[i+1])
	}
	return len(h) / 2
}

// OffHeapBytes is the memory the store holds outside the Go heap (its
// slots and arena blocks): add it to a heap figure for what records cost.
func (s *Store) OffHeapBytes() int64 {
	if s.mem == nil || !offheap.Mapped {
		return 0
	}
	n := int64(0)
	for _, b := range s.mem.list {
		n += int64(len(b))
	}
	return n
}
