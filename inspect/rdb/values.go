package rdb

import (
	"crypto/sha1"
	"encoding/binary"
	"errors"
	"fmt"
)

// ErrTooBig is returned by StringValue and HashFields for a value whose
// encoded form is over Options.MaxBlob: it was skipped, not read.
var ErrTooBig = errTooBig

// StringValue reads the current key's string value, keeping its first max
// bytes (valid until the next read), and returns its whole length.
func (r *Reader) StringValue(max int) ([]byte, int64, error) {
	if !r.pending || r.cur.rdbType != typeString {
		return nil, 0, errors.New("rdb: StringValue on a key that is not an unread string")
	}
	r.pending = false
	r.cur.Encoding = "raw"
	if p, err := r.in.peek(1); err == nil { // the length byte says how it is stored
		switch {
		case p[0] == 0xc3:
			r.cur.Encoding = "lzf"
		case p[0]>>6 == 3:
			r.cur.Encoding = "int"
		}
	}
	r.sumOK = false
	v, full, err := r.stringCapped(&r.valBuf, max, "a string value")
	r.mem = estimateString(len(r.cur.Key), full, r.cur.Encoding == "int")
	return v, full, err
}

// ValueDigest is the SHA-1 of the whole string value StringValue just read
// (with Options.Digest); ok is false when it was too big to read.
func (r *Reader) ValueDigest() (sum [sha1.Size]byte, ok bool) { return r.sum, r.sumOK }

// HashField is one field of a hash, handed to HashFields' callback: Name
// and Value are cut to the caps asked for (NameLen and ValueLen are their
// whole lengths) and valid only during the call.
type HashField struct {
	Name     []byte
	NameLen  int64
	Value    []byte
	ValueLen int64
	ExpireMs int64 // the field's own expiry, absolute ms; -1: none
	// Digest is the SHA-1 of the whole value, with Options.Digest.
	Digest   [sha1.Size]byte
	DigestOK bool // false: digests off, or the value was too big to read
}

// HashFields reads the current key's hash, calling fn for each field.
func (r *Reader) HashFields(nameCap, valueCap int, fn func(HashField)) error {
	return r.HashFieldsCap(nameCap, func([]byte) int { return valueCap }, fn)
}

// HashFieldsCap is HashFields with each value's cap chosen by its field's
// name: 0 for a field whose length alone matters, so a compressed value
// saved apart (a hash table's) is skipped, not decompressed.
func (r *Reader) HashFieldsCap(nameCap int, capFor func(name []byte) int, fn func(HashField)) error {
	return r.HashFieldsTo(nameCap, funcFields{capFor, fn})
}

// funcFields is a FieldReader made of two functions.
type funcFields struct {
	capFor func([]byte) int
	fn     func(HashField)
}

func (f funcFields) ValueCap(name []byte) int { return f.capFor(name) }
func (f funcFields) Field(h *HashField)       { f.fn(*h) }

// skipFields reads a hash for its framing alone.
type skipFields struct{}

func (skipFields) ValueCap([]byte) int { return 0 }
func (skipFields) Field(*HashField)    {}

// HashFieldsTo reads the current key's hash, handing each field to fr,
// with names cut to nameCap and values to fr.ValueCap.
func (r *Reader) HashFieldsTo(nameCap int, fr FieldReader) error {
	if !r.pending || r.cur.Type != TypeHash {
		return errors.New("rdb: HashFields on a key that is not an unread hash")
	}
	r.pending = false
	switch t := r.cur.rdbType; t {
	case typeHash, typeHashMeta, typeHashMetaPreGA:
		return r.hashTable(t, nameCap, fr)
	case typeHashLpEx:
		if _, err := r.in.next(8); err != nil { // the min expiry: each field has its own
			return r.fail(err, "a hash's next field expiry")
		}
	}
	at := r.in.offset()
	b, err := r.blob("an encoded hash")
	if err != nil {
		return err
	}
	r.mem = estimateEncoded(len(r.cur.Key), len(b))
	if perr := r.encodedHash(b, nameCap, fr); perr != nil {
		return &FormatError{Offset: at, Msg: fmt.Sprintf("corrupt %s hash: %v", r.cur.Encoding, perr)}
	}
	return nil
}

// encodedHash hands each field of a hash held as one blob to fr.
func (r *Reader) encodedHash(b []byte, nameCap int, fr FieldReader) error {
	var it elems
	var err error
	switch r.cur.rdbType {
	case typeHashZipmap:
		return zipmapPairs(b, func(k, v []byte) { r.emit(fr, k, v, nameCap, -1) })
	case typeHashZiplist:
		if it, err = ziplistElems(b); err != nil {
			return err
		}
		return r.pairs(it, nameCap, fr)
	}
	if it, err = listpackElems(b); err != nil {
		return err
	}
	if r.cur.rdbType == typeHashListpack {
		return r.pairs(it, nameCap, fr)
	}
	return r.triples(it, nameCap, fr)
}

// hashTable reads a hash saved field by field (with a TTL before each
// field in the field-TTL types).
func (r *Reader) hashTable(t byte, nameCap int, fr FieldReader) error {
	var minExpire int64
	if t == typeHashMeta {
		p, err := r.in.next(8)
		if err != nil {
			return r.fail(err, "a hash's next field expiry")
		}
		minExpire = int64(binary.LittleEndian.Uint64(p))
	}
	n, err := r.length("a hash's field count")
	if err != nil {
		return err
	}
	mem := int64(0)
	for range n {
		f := HashField{ExpireMs: -1}
		if t != typeHash {
			ttl, err := r.length("a hash field's TTL")
			if err != nil {
				return err
			}
			switch {
			case ttl == 0:
			case t == typeHashMeta: // relative to the min, plus one (0 means none)
				f.ExpireMs = int64(ttl) + minExpire - 1
			default:
				f.ExpireMs = int64(ttl)
			}
		}
		if f.Name, f.NameLen, err = r.stringCapped(&r.nameBuf, nameCap, "a hash field's name"); err != nil && !errors.Is(err, errTooBig) {
			return err
		}
		r.sumOK = false
		if f.Value, f.ValueLen, err = r.stringCapped(&r.valBuf, fr.ValueCap(f.Name), "a hash field's value"); err != nil && !errors.Is(err, errTooBig) {
			return err
		}
		f.Digest, f.DigestOK = r.sum, r.sumOK
		mem += dictEntry + sdsSize(f.NameLen) + sdsSize(f.ValueLen)
		r.field = f
		fr.Field(&r.field)
	}
	r.mem = keyOverhead(len(r.cur.Key)) + robj + dictHeader + dictTable(n) + mem
	return nil
}

func capField(k, v []byte, nameCap, valueCap int, expire int64) HashField {
	return HashField{Name: k[:min(len(k), nameCap)], NameLen: int64(len(k)),
		Value: v[:min(len(v), valueCap)], ValueLen: int64(len(v)), ExpireMs: expire}
}

// skipValue consumes the current key's value, whatever its type, without
// decoding more than its framing.
func (r *Reader) skipValue() error {
	r.pending = false
	start := r.in.offset()
	if err := r.skipObject(r.cur.rdbType); err != nil {
		if errors.Is(err, errTooBig) {
			err = nil
		}
		if err != nil {
			return err
		}
	}
	if r.mem < 0 {
		r.mem = keyOverhead(len(r.cur.Key)) + (r.in.offset()-start)*3/2
	}
	return nil
}

func (r *Reader) skipObject(t byte) error {
	switch t {
	case typeString, typeHashZipmap, typeListZiplist, typeSetIntset, typeZSetZiplist,
		typeHashZiplist, typeHashListpack, typeZSetListpack, typeSetListpack:
		return r.skipString("a value")
	case typeHashLpEx:
		if _, err := r.in.next(8); err != nil {
			return r.fail(err, "a hash's next field expiry")
		}
		return r.skipString("an encoded hash")
	case typeHashLpExPreGA:
		return r.skipString("an encoded hash")
	case typeList, typeSet, typeListQuicklist:
		return r.skipStrings(1, "a list or set element")
	case typeHash:
		return r.skipStrings(2, "a hash field")
	case typeHashMeta, typeHashMetaPreGA:
		return r.hashTable(t, 0, skipFields{})
	case typeZSet, typeZSet2:
		return r.skipZSet(t)
	case typeListQuicklist2:
		return r.skipQuicklist2()
	case typeStreamListpacks, typeStreamListpack2, typeStreamListpack3:
		return r.skipStream(t)
	case typeModule2:
		r.stats.ModuleValue++
		if _, err := r.length("a module id"); err != nil {
			return err
		}
		return r.skipModuleOps()
	}
	return &FormatError{Offset: r.in.offset(), Msg: fmt.Sprintf("cannot skip a value of type %d", t)}
}

// skipStrings skips a count and then count×per strings.
func (r *Reader) skipStrings(per uint64, what string) error {
	n, err := r.length("an element count")
	if err != nil {
		return err
	}
	for range n {
		for range per {
			if err := r.skipString(what); err != nil {
				return err
			}
		}
	}
	return nil
}

func (r *Reader) skipZSet(t byte) error {
	n, err := r.length("a sorted set's size")
	if err != nil {
		return err
	}
	for range n {
		if err := r.skipString("a sorted set member"); err != nil {
			return err
		}
		if t == typeZSet2 {
			if _, err := r.in.next(8); err != nil {
				return r.fail(err, "a sorted set score")
			}
			continue
		}
		l, err := r.in.byte() // a score as text; 253–255 are NaN and ±inf
		if err != nil {
			return r.fail(err, "a sorted set score")
		}
		if l < 253 {
			if err := r.in.discard(int64(l)); err != nil {
				return r.fail(err, "a sorted set score")
			}
		}
	}
	return nil
}

func (r *Reader) skipQuicklist2() error {
	n, err := r.length("a list's node count")
	if err != nil {
		return err
	}
	for range n {
		if _, err := r.length("a list node's container"); err != nil {
			return err
		}
		if err := r.skipString("a list node"); err != nil {
			return err
		}
	}
	return nil
}

// skipModuleOps skips a module value's self-describing opcodes up to its
// EOF opcode.
func (r *Reader) skipModuleOps() error {
	for {
		op, err := r.length("a module value opcode")
		if err != nil {
			return err
		}
		switch op {
		case moduleOpEOF:
			return nil
		case moduleOpSint, moduleOpUint:
			_, err = r.length("a module integer")
		case moduleOpFloat:
			_, err = r.in.next(4)
			err = r.fail(err, "a module float")
		case moduleOpDouble:
			_, err = r.in.next(8)
			err = r.fail(err, "a module double")
		case moduleOpString:
			err = r.skipString("a module string")
		default:
			return &FormatError{Offset: r.in.offset(), Msg: fmt.Sprintf("unknown module value opcode %d", op)}
		}
		if err != nil {
			return err
		}
	}
}
