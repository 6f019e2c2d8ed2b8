package recordstore

import (
	"encoding/binary"
	"strings"

	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/inspect/keytemplate"
)

// A key that fits its keyspace's template is held in the template's form:
// the literals are the template's, and each capture is an index into the
// store's dictionary of capture values (endpoints, principals: the few
// values most keys share) or, for values seen too rarely to share (the
// idempotency key), its bytes. An atlasmart key then costs about a third
// of its text.

const (
	maxCaptures   = 16   // captures of a template held in its form
	dictPerColumn = 4096 // distinct values a capture may add to the dictionary
	maxDict       = 1 << 20
)

// appendHeld appends to dst the key that held spells (held as
// encodeHeld wrote it), setting offs[2j], offs[2j+1] to capture j's bounds
// relative to where the key starts, when offs is not nil.
func appendHeld(t *keytemplate.Template, dst, held []byte, dict []string, offs []int) []byte {
	base := len(dst)
	for i := range t.Parts() {
		lit, capture := t.Part(i)
		if capture < 0 {
			dst = append(dst, lit...)
			continue
		}
		v, n := binary.Uvarint(held)
		held = held[n:]
		start := len(dst) - base
		if v > 0 {
			dst = append(dst, dict[v-1]...)
		} else {
			ln, m := binary.Uvarint(held)
			dst = append(dst, held[m:m+int(ln)]...)
			held = held[m+int(ln):]
		}
		if offs != nil {
			offs[2*capture], offs[2*capture+1] = start, len(dst)-base
		}
	}
	return dst
}

// encodeHeld appends r's key in its template's form to dst; false when the
// key does not fit the template exactly as r's captures say.
func (s *Store) encodeHeld(dst []byte, r *inspect.Record, ks uint8) ([]byte, bool) {
	if r.Keyspace == nil || r.Groups == nil {
		return dst, false
	}
	t := r.Keyspace.Template
	if t.Empty() || len(t.Names()) > maxCaptures || len(r.Groups) != len(t.Names()) {
		return dst, false
	}
	g, ok := t.Match(r.Key)
	if !ok {
		return dst, false
	}
	for j := range g {
		if g[j] != r.Groups[j] {
			return dst, false
		}
	}
	start := len(dst)
	for i := range t.Parts() {
		_, capture := t.Part(i)
		if capture < 0 {
			continue
		}
		v := g[capture]
		if idx, ok := s.dictIndex(v, int(ks)<<8|capture); ok {
			dst = binary.AppendUvarint(dst, uint64(idx)+1)
			continue
		}
		dst = binary.AppendUvarint(dst, 0)
		dst = binary.AppendUvarint(dst, uint64(len(v)))
		dst = append(dst, v...)
	}
	// Exact or not at all: the key rebuilt must be the key.
	s.check = appendHeld(t, s.check[:0], dst[start:], s.dict, nil)
	return dst, string(s.check) == r.Key
}

// dictIndex is v's index in the dictionary, adding it while its column
// (keyspace and capture) has added fewer than dictPerColumn values.
func (s *Store) dictIndex(v string, column int) (uint32, bool) {
	if idx, ok := s.dictIdx[v]; ok {
		return idx, true
	}
	if len(v) < 2 || len(s.dict) >= maxDict || s.dictAdded[column] >= dictPerColumn {
		return 0, false
	}
	if s.dictIdx == nil {
		s.dictIdx, s.dictAdded = map[string]uint32{}, map[int]int{}
	}
	s.dictAdded[column]++
	h := strings.Clone(v)
	s.dictIdx[h] = uint32(len(s.dict))
	s.dict = append(s.dict, h)
	return uint32(len(s.dict) - 1), true
}
