package rdb

import (
	"crypto/sha1"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
)

// elem is one element of a listpack or ziplist: a string, or an integer
// the encoding stored as such.
type elem struct {
	s     []byte
	n     int64
	isInt bool
}

// text is the element as the server would return it, formatting an
// integer into buf.
func (e elem) text(buf []byte) []byte {
	if e.isInt {
		return strconv.AppendInt(buf[:0], e.n, 10)
	}
	return e.s
}

var errShort = errors.New("an element runs past the end of the encoding")

// elems walks the elements of a listpack or ziplist in place, one next
// at a time: a loop rather than a callback, so reading a hash allocates no
// closure.
type elems struct {
	b   []byte
	p   int  // the next entry
	zip bool // a ziplist, else a listpack
}

// listpackElems starts on a listpack (listpack.c): a 4-byte total length,
// a 2-byte count, the entries, each followed by its backward length, and
// 0xFF.
func listpackElems(b []byte) (elems, error) {
	if len(b) < 7 {
		return elems{}, fmt.Errorf("%d bytes is too short for a listpack", len(b))
	}
	if total := binary.LittleEndian.Uint32(b); int64(total) != int64(len(b)) {
		return elems{}, fmt.Errorf("the listpack says it is %d bytes long, its string is %d", total, len(b))
	}
	return elems{b: b, p: 6}, nil
}

// next decodes the next element into e; ok is false at the end marker.
// Short strings and small integers, most of what a record holds, are
// decoded here; the rest by listpackEntry.
func (it *elems) next(e *elem) (ok bool, err error) {
	b, p := it.b, it.p
	if p >= len(b) {
		if it.zip {
			return false, errors.New("the ziplist has no end marker")
		}
		return false, errors.New("the listpack has no end marker")
	}
	c := b[p]
	switch {
	case c == 0xff:
		return false, nil
	case it.zip:
		return it.nextZip(e)
	case c&0xc0 == 0x80: // a string up to 63 bytes, its backward length one byte
		end := p + 1 + int(c&0x3f)
		if end+1 > len(b) {
			return false, fmt.Errorf("entry at %d: %w", p, errShort)
		}
		*e = elem{s: b[p+1 : end]}
		it.p = end + 1
		return true, nil
	case c&0x80 == 0: // a 7-bit unsigned integer
		if p+2 > len(b) {
			return false, fmt.Errorf("entry at %d: %w", p+2, errShort)
		}
		*e = elem{n: int64(c), isInt: true}
		it.p = p + 2
		return true, nil
	}
	v, n, err := listpackEntry(b[p:])
	if err != nil {
		return false, fmt.Errorf("entry at %d: %w", p, err)
	}
	p += n + backlenSize(n)
	if p > len(b) {
		return false, fmt.Errorf("entry at %d: %w", p, errShort)
	}
	*e, it.p = v, p
	return true, nil
}

// listpackEntry decodes the entry at the start of b, returning it and the
// length of its encoding and data (without the backward length).
func listpackEntry(b []byte) (elem, int, error) {
	c := b[0]
	need := func(n int) error {
		if n > len(b) {
			return errShort
		}
		return nil
	}
	switch {
	case c&0x80 == 0: // 7-bit unsigned integer
		return elem{n: int64(c & 0x7f), isInt: true}, 1, nil
	case c&0xc0 == 0x80: // string up to 63 bytes
		l := int(c & 0x3f)
		if err := need(1 + l); err != nil {
			return elem{}, 0, err
		}
		return elem{s: b[1 : 1+l]}, 1 + l, nil
	case c&0xe0 == 0xc0: // 13-bit signed integer
		if err := need(2); err != nil {
			return elem{}, 0, err
		}
		v := int64(c&0x1f)<<8 | int64(b[1])
		if v >= 1<<12 {
			v -= 1 << 13
		}
		return elem{n: v, isInt: true}, 2, nil
	case c&0xf0 == 0xe0: // string up to 4095 bytes
		if err := need(2); err != nil {
			return elem{}, 0, err
		}
		l := int(c&0x0f)<<8 | int(b[1])
		if err := need(2 + l); err != nil {
			return elem{}, 0, err
		}
		return elem{s: b[2 : 2+l]}, 2 + l, nil
	case c == 0xf0: // string with a 32-bit length
		if err := need(5); err != nil {
			return elem{}, 0, err
		}
		l := int64(binary.LittleEndian.Uint32(b[1:]))
		if 5+l > int64(len(b)) {
			return elem{}, 0, errShort
		}
		return elem{s: b[5 : 5+l]}, 5 + int(l), nil
	case c >= 0xf1 && c <= 0xf4:
		w := [...]int{2, 3, 4, 8}[c-0xf1]
		if err := need(1 + w); err != nil {
			return elem{}, 0, err
		}
		return elem{n: signedLE(b[1 : 1+w]), isInt: true}, 1 + w, nil
	}
	return elem{}, 0, fmt.Errorf("unknown listpack encoding byte 0x%02x", c)
}

// signedLE reads a little-endian two's-complement integer of len(b) bytes.
func signedLE(b []byte) int64 {
	var u uint64
	for i := len(b) - 1; i >= 0; i-- {
		u = u<<8 | uint64(b[i])
	}
	shift := 64 - 8*uint(len(b))
	return int64(u<<shift) >> shift
}

// backlenSize is how many bytes a listpack entry of size n stores its
// length in, after it (7 bits per byte).
func backlenSize(n int) int {
	switch {
	case n < 128:
		return 1
	case n < 16384:
		return 2
	case n < 2097152:
		return 3
	case n < 268435456:
		return 4
	}
	return 5
}

// nextText is next as the server would return the element: an integer
// formatted into buf. A short string, most of what a record holds, is
// decoded here, in registers.
func (it *elems) nextText(buf []byte) (s []byte, ok bool, err error) {
	b, p := it.b, it.p
	if !it.zip && p < len(b) && b[p]&0xc0 == 0x80 {
		end := p + 1 + int(b[p]&0x3f)
		if end+1 <= len(b) {
			it.p = end + 1
			return b[p+1 : end], true, nil
		}
	}
	var e elem
	ok, err = it.next(&e)
	return e.text(buf), ok, err
}

// ziplistElems starts on a ziplist (ziplist.c, before Redis 7): a 10-byte
// header, entries each led by the previous entry's length and an
// encoding, and 0xFF.
func ziplistElems(b []byte) (elems, error) {
	if len(b) < 11 {
		return elems{}, fmt.Errorf("%d bytes is too short for a ziplist", len(b))
	}
	if total := binary.LittleEndian.Uint32(b); int64(total) != int64(len(b)) {
		return elems{}, fmt.Errorf("the ziplist says it is %d bytes long, its string is %d", total, len(b))
	}
	return elems{b: b, p: 10, zip: true}, nil
}

// nextZip is next in a ziplist, past the check for its end marker.
func (it *elems) nextZip(e *elem) (bool, error) {
	b, p := it.b, it.p
	if b[p] == 0xfe {
		p += 5
	} else {
		p++
	}
	if p >= len(b) {
		return false, fmt.Errorf("entry at %d: %w", p, errShort)
	}
	v, n, err := ziplistEntry(b[p:])
	if err != nil {
		return false, fmt.Errorf("entry at %d: %w", p, err)
	}
	*e, it.p = v, p+n
	return true, nil
}

// ziplistEntry decodes the entry whose encoding byte starts b.
func ziplistEntry(b []byte) (elem, int, error) {
	c := b[0]
	str := func(hdr int, l int64) (elem, int, error) {
		if int64(hdr)+l > int64(len(b)) {
			return elem{}, 0, errShort
		}
		return elem{s: b[hdr : int64(hdr)+l]}, hdr + int(l), nil
	}
	integer := func(w int) (elem, int, error) {
		if 1+w > len(b) {
			return elem{}, 0, errShort
		}
		return elem{n: signedLE(b[1 : 1+w]), isInt: true}, 1 + w, nil
	}
	switch {
	case c>>6 == 0:
		return str(1, int64(c&0x3f))
	case c>>6 == 1:
		if len(b) < 2 {
			return elem{}, 0, errShort
		}
		return str(2, int64(c&0x3f)<<8|int64(b[1]))
	case c == 0x80:
		if len(b) < 5 {
			return elem{}, 0, errShort
		}
		return str(5, int64(binary.BigEndian.Uint32(b[1:])))
	case c == 0xc0:
		return integer(2)
	case c == 0xd0:
		return integer(4)
	case c == 0xe0:
		return integer(8)
	case c == 0xf0:
		return integer(3)
	case c == 0xfe:
		return integer(1)
	case c >= 0xf1 && c <= 0xfd:
		return elem{n: int64(c&0x0f) - 1, isInt: true}, 1, nil
	}
	return elem{}, 0, fmt.Errorf("unknown ziplist encoding byte 0x%02x", c)
}

// FieldReader is what HashFieldsTo hands a hash's fields to: an
// interface rather than closures, so reading a million hashes allocates
// nothing per key.
type FieldReader interface {
	// ValueCap is how many bytes of the named field's value to keep: 0
	// for a field whose length alone matters.
	ValueCap(name []byte) int
	// Field receives one field, valid only during the call (a pointer:
	// the struct is large and read a million times a second).
	Field(*HashField)
}

// pairs hands each name/value pair of a listpack or ziplist hash to fr.
func (r *Reader) pairs(it elems, nameCap int, fr FieldReader) error {
	buf := grow(&r.intBuf, 48)
	for {
		k, ok, err := it.nextText(buf[:0:24])
		if err != nil || !ok {
			return err
		}
		v, ok, err := it.nextText(buf[24:24:48])
		if err != nil {
			return err
		}
		if !ok {
			return errors.New("a field without a value")
		}
		r.emit(fr, k, v, nameCap, -1)
	}
}

// triples hands each field of a listpack hash with field TTLs (Redis
// 7.4+: name, value, absolute expiry in ms or 0 for none) to fr.
func (r *Reader) triples(it elems, nameCap int, fr FieldReader) error {
	buf := grow(&r.intBuf, 48)
	var name, value, ttl elem
	for {
		ok, err := it.next(&name)
		if err != nil || !ok {
			return err
		}
		if ok, err = it.next(&value); err == nil && ok {
			ok, err = it.next(&ttl)
		}
		if err != nil {
			return err
		}
		if !ok {
			return errors.New("a field without its value or TTL")
		}
		if !ttl.isInt {
			return errors.New("a field's TTL is not an integer")
		}
		exp := ttl.n
		if exp == 0 {
			exp = -1
		}
		r.emit(fr, name.text(buf[:0:24]), value.text(buf[24:24:48]), nameCap, exp)
	}
}

// emit hands one field of an encoded hash to fr, with the digest of its
// whole value when digests are on (every value is whole in the blob).
func (r *Reader) emit(fr FieldReader, k, v []byte, nameCap int, expire int64) {
	f := &r.field
	*f = capField(k, v, nameCap, fr.ValueCap(k), expire)
	if r.digest != nil {
		f.Digest, f.DigestOK = sha1.Sum(v), true
	}
	fr.Field(f)
}

// zipmapPairs hands each pair of a zipmap (zipmap.c, Redis before 2.6) to
// fn: a count byte, then per pair a length, the key, a length, a free
// byte, the value and its free space, and 0xFF.
func zipmapPairs(b []byte, fn func(k, v []byte)) error {
	p := 1
	length := func() (int, error) {
		if p >= len(b) {
			return 0, errShort
		}
		if b[p] < 254 {
			p++
			return int(b[p-1]), nil
		}
		if b[p] == 255 || p+5 > len(b) {
			return 0, errShort
		}
		l := binary.LittleEndian.Uint32(b[p+1:])
		p += 5
		if int64(l) > int64(len(b)) {
			return 0, errShort
		}
		return int(l), nil
	}
	for {
		if p >= len(b) {
			return errors.New("the zipmap has no end marker")
		}
		if b[p] == 0xff {
			return nil
		}
		kl, err := length()
		if err != nil || p+kl > len(b) {
			return errShort
		}
		k := b[p : p+kl]
		p += kl
		vl, err := length()
		if err != nil || p+1+vl > len(b) {
			return errShort
		}
		free := int(b[p])
		v := b[p+1 : p+1+vl]
		p += 1 + vl + free
		fn(k, v)
	}
}
