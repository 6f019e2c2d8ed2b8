package rdb

import (
	"crypto/sha1"
	"encoding/binary"
	"fmt"
	"io"
	"strconv"
)

// String encodings after a length byte of 11xxxxxx.
const (
	encInt8  = 0
	encInt16 = 1
	encInt32 = 2
	encLZF   = 3
)

// lenOrEnc reads a length, or the special encoding a string starts with
// (enc ≥ 0).
func (r *Reader) lenOrEnc(what string) (n uint64, enc int, err error) {
	at := r.in.offset()
	b, err := r.in.byte()
	if err != nil {
		return 0, -1, r.fail(err, what)
	}
	switch b >> 6 {
	case 0:
		return uint64(b & 0x3f), -1, nil
	case 1:
		c, err := r.in.byte()
		if err != nil {
			return 0, -1, r.fail(err, what)
		}
		return uint64(b&0x3f)<<8 | uint64(c), -1, nil
	case 3:
		return 0, int(b & 0x3f), nil
	}
	switch b {
	case 0x80:
		p, err := r.in.next(4)
		if err != nil {
			return 0, -1, r.fail(err, what)
		}
		return uint64(binary.BigEndian.Uint32(p)), -1, nil
	case 0x81:
		p, err := r.in.next(8)
		if err != nil {
			return 0, -1, r.fail(err, what)
		}
		return binary.BigEndian.Uint64(p), -1, nil
	}
	return 0, -1, &FormatError{Offset: at, Msg: fmt.Sprintf("invalid length byte 0x%02x in %s", b, what)}
}

// length reads a plain length (a count, a number).
func (r *Reader) length(what string) (uint64, error) {
	at := r.in.offset()
	n, enc, err := r.lenOrEnc(what)
	if err == nil && enc >= 0 {
		return 0, &FormatError{Offset: at, Msg: fmt.Sprintf("expected a length for %s, found a string encoding (%d)", what, enc)}
	}
	return n, err
}

// stringCapped reads a string, keeping at most max bytes of it in *buf;
// it returns what it kept and the string's whole length. An LZF string
// whose compressed form is over MaxBlob is skipped whole: it returns
// nothing kept and its length.
func (r *Reader) stringCapped(buf *[]byte, max int, what string) ([]byte, int64, error) {
	at := r.in.offset()
	n, enc, err := r.lenOrEnc(what)
	if err != nil {
		return nil, 0, err
	}
	switch enc {
	case -1:
		if r.digest == nil && n <= uint64(max) && uint64(r.in.end-r.in.pos) >= n { // the usual: kept whole, in the buffer
			dst := grow(buf, int(n))
			r.in.pos += copy(dst, r.in.buf[r.in.pos:])
			return dst, int64(n), nil
		}
		keep := int(min(n, uint64(max)))
		dst := grow(buf, keep)
		if err := r.in.readFull(dst); err != nil {
			return nil, 0, r.fail(err, what)
		}
		var rest io.Writer
		if r.digest != nil {
			r.digest.Reset()
			r.digest.Write(dst)
			rest = r.digest
		}
		if err := r.in.discardTo(int64(min(n, 1<<62))-int64(keep), rest); err != nil || n > 1<<62 {
			return nil, 0, r.failLen(err, n, at, what)
		}
		r.sumValue()
		return dst, int64(n), nil
	case encInt8, encInt16, encInt32:
		v, err := r.intEnc(enc, what)
		if err != nil {
			return nil, 0, err
		}
		dst := strconv.AppendInt((*buf)[:0], v, 10)
		*buf = dst
		r.sumOf(dst)
		full := int64(len(dst))
		return dst[:min(len(dst), max)], full, nil
	case encLZF:
		return r.lzfString(buf, max, false, what)
	}
	return nil, 0, &FormatError{Offset: at, Msg: fmt.Sprintf("unknown string encoding %d in %s", enc, what)}
}

// failLen reports a length that runs past the file, or one too large to be
// real.
func (r *Reader) failLen(err error, n uint64, at int64, what string) error {
	if err != nil {
		return r.fail(err, fmt.Sprintf("%s of %d bytes", what, n))
	}
	return &FormatError{Offset: at, Msg: fmt.Sprintf("%s claims %d bytes, more than any file holds", what, n)}
}

func (r *Reader) intEnc(enc int, what string) (int64, error) {
	size := 1 << enc // 1, 2, 4 bytes
	p, err := r.in.next(size)
	if err != nil {
		return 0, r.fail(err, what)
	}
	switch enc {
	case encInt8:
		return int64(int8(p[0])), nil
	case encInt16:
		return int64(int16(binary.LittleEndian.Uint16(p))), nil
	}
	return int64(int32(binary.LittleEndian.Uint32(p))), nil
}

// lzfString reads an LZF-compressed string (its lengths already past the
// encoding byte): whole when the caller needs all of it (whole), else its
// first max bytes.
func (r *Reader) lzfString(buf *[]byte, max int, whole bool, what string) ([]byte, int64, error) {
	at := r.in.offset()
	clen, err := r.length(what + " (compressed length)")
	if err != nil {
		return nil, 0, err
	}
	ulen, err := r.length(what + " (length)")
	if err != nil {
		return nil, 0, err
	}
	whole = whole || r.digest != nil && ulen <= uint64(r.opt.MaxBlob)
	if clen > uint64(r.opt.MaxBlob) || ulen > 1<<40 || whole && ulen > uint64(r.opt.MaxBlob) {
		if err := r.in.discard(int64(min(clen, 1<<62))); err != nil {
			return nil, 0, r.fail(err, what)
		}
		r.sumOK = false
		return nil, int64(min(ulen, 1<<62)), errTooBig
	}
	if max == 0 && !whole { // only its length is asked for
		if err := r.in.discard(int64(clen)); err != nil {
			return nil, 0, r.fail(err, what)
		}
		return nil, int64(ulen), nil
	}
	src := grow(&r.lzfBuf, int(clen))
	if err := r.in.readFull(src); err != nil {
		return nil, 0, r.fail(err, fmt.Sprintf("%s (%d compressed bytes)", what, clen))
	}
	keep := int(min(ulen, uint64(max)))
	if whole && keep < int(ulen) { // decoded whole for its digest, kept in part
		all := grow(&r.lzfOut, int(ulen))
		if _, err := lzfDecode(src, all, false); err != nil {
			return nil, 0, &FormatError{Offset: at, Msg: fmt.Sprintf("corrupt LZF data in %s: %v", what, err)}
		}
		r.sumOf(all)
		dst := grow(buf, keep)
		copy(dst, all)
		return dst, int64(ulen), nil
	}
	dst := grow(buf, keep)
	got, err := lzfDecode(src, dst, keep < int(ulen))
	if err != nil {
		return nil, 0, &FormatError{Offset: at, Msg: fmt.Sprintf("corrupt LZF data in %s: %v", what, err)}
	}
	r.sumOf(dst[:got])
	return dst[:got], int64(ulen), nil
}

// errTooBig marks a value skipped for being over MaxBlob.
var errTooBig = fmt.Errorf("value over the read limit")

// blob reads a whole string (a listpack or ziplist): in the input's
// buffer when it fits there, else into r.blobBuf.
func (r *Reader) blob(what string) ([]byte, error) {
	at := r.in.offset()
	n, enc, err := r.lenOrEnc(what)
	if err != nil {
		return nil, err
	}
	switch enc {
	case -1:
		if n > uint64(r.opt.MaxBlob) {
			if err := r.in.discard(int64(min(n, 1<<62))); err != nil || n > 1<<62 {
				return nil, r.failLen(err, n, at, what)
			}
			return nil, errTooBig
		}
		if n <= inputBuf { // read in place: valid until the next read, which comes after its fields
			b, err := r.in.next(int(n))
			if err != nil {
				return nil, r.fail(err, fmt.Sprintf("%s of %d bytes", what, n))
			}
			return b, nil
		}
		dst := grow(&r.blobBuf, int(n))
		if err := r.in.readFull(dst); err != nil {
			return nil, r.fail(err, fmt.Sprintf("%s of %d bytes", what, n))
		}
		return dst, nil
	case encLZF:
		b, _, err := r.lzfString(&r.blobBuf, r.opt.MaxBlob, true, what)
		return b, err
	}
	return nil, &FormatError{Offset: at, Msg: fmt.Sprintf("expected %s as a byte string, found an integer encoding", what)}
}

// skipString consumes a string without keeping it.
func (r *Reader) skipString(what string) error {
	at := r.in.offset()
	n, enc, err := r.lenOrEnc(what)
	if err != nil {
		return err
	}
	switch enc {
	case -1:
		if err := r.in.discard(int64(min(n, 1<<62))); err != nil || n > 1<<62 {
			return r.failLen(err, n, at, what)
		}
		return nil
	case encInt8, encInt16, encInt32:
		_, err := r.intEnc(enc, what)
		return err
	case encLZF:
		clen, err := r.length(what + " (compressed length)")
		if err != nil {
			return err
		}
		if _, err := r.length(what + " (length)"); err != nil {
			return err
		}
		if err := r.in.discard(int64(min(clen, 1<<62))); err != nil || clen > 1<<62 {
			return r.failLen(err, clen, at, what)
		}
		return nil
	}
	return &FormatError{Offset: at, Msg: fmt.Sprintf("unknown string encoding %d in %s", enc, what)}
}

// grow returns (*buf)[:n], reallocating only when it is too small. n is
// always bounded by the caller (MaxBlob, MaxKey or a value cap).
func grow(buf *[]byte, n int) []byte {
	if cap(*buf) < n {
		*buf = make([]byte, n, max(n, 2*cap(*buf)))
	}
	*buf = (*buf)[:n]
	return *buf
}

// sumValue closes the digest of the string just read, when digests are on.
func (r *Reader) sumValue() {
	if r.digest != nil {
		r.digest.Sum(r.sum[:0])
		r.sumOK = true
	}
}

// sumOf is the digest of a string held whole.
func (r *Reader) sumOf(b []byte) {
	if r.digest != nil {
		r.sum, r.sumOK = sha1.Sum(b), true
	}
}
