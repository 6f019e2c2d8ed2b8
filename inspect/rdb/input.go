package rdb

import (
	"errors"
	"io"
)

// input is a buffered reader that knows its offset in the file and keeps
// the running CRC-64 of everything consumed, so the trailer can be checked
// without a second pass or a copy of the file.
type input struct {
	r      io.Reader
	buf    []byte
	pos    int   // next unread byte in buf
	end    int   // bytes valid in buf
	crcPos int   // bytes of buf already in crc
	base   int64 // file offset of buf[0]
	crc    uint64
	err    error // the read error that ended the input (io.EOF at the end)
}

const inputBuf = 1 << 20

func newInput(r io.Reader) *input {
	return &input{r: r, buf: make([]byte, inputBuf)}
}

// offset is the file offset of the next unread byte.
func (in *input) offset() int64 { return in.base + int64(in.pos) }

// sum folds the consumed bytes into the CRC and returns it.
func (in *input) sum() uint64 {
	in.crc = crc64Update(in.crc, in.buf[in.crcPos:in.pos])
	in.crcPos = in.pos
	return in.crc
}

// fill makes at least n bytes available (n ≤ len(buf)), or returns the
// error that prevented it: io.ErrUnexpectedEOF for a file that ends early.
func (in *input) fill(n int) error {
	if in.end-in.pos >= n {
		return nil
	}
	in.sum()
	copy(in.buf, in.buf[in.pos:in.end])
	in.base += int64(in.pos)
	in.end -= in.pos
	in.pos, in.crcPos = 0, 0
	for in.end < n {
		if in.err != nil {
			return in.short()
		}
		m, err := in.r.Read(in.buf[in.end:])
		in.end += m
		if err != nil {
			in.err = err
		}
	}
	return nil
}

func (in *input) short() error {
	if errors.Is(in.err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return in.err
}

func (in *input) byte() (byte, error) {
	if in.pos >= in.end {
		if err := in.fill(1); err != nil {
			return 0, err
		}
	}
	b := in.buf[in.pos]
	in.pos++
	return b, nil
}

// peek returns the next n bytes (n ≤ inputBuf) without consuming them; the
// slice is valid until the next read.
func (in *input) peek(n int) ([]byte, error) {
	if err := in.fill(n); err != nil {
		return nil, err
	}
	return in.buf[in.pos : in.pos+n], nil
}

// next consumes n bytes (n ≤ inputBuf) and returns them, valid until the
// next read.
func (in *input) next(n int) ([]byte, error) {
	b, err := in.peek(n)
	if err != nil {
		return nil, err
	}
	in.pos += n
	return b, nil
}

// readFull consumes len(dst) bytes into dst, whatever their number.
func (in *input) readFull(dst []byte) error {
	for len(dst) > 0 {
		if in.pos >= in.end {
			if err := in.fill(1); err != nil {
				return err
			}
		}
		c := copy(dst, in.buf[in.pos:in.end])
		in.pos += c
		dst = dst[c:]
	}
	return nil
}

// discard consumes n bytes without keeping them.
func (in *input) discard(n int64) error { return in.discardTo(n, nil) }

// discardTo consumes n bytes, writing them to w when it is not nil (a
// digest of a value too long to keep).
func (in *input) discardTo(n int64, w io.Writer) error {
	for n > 0 {
		if in.pos >= in.end {
			if err := in.fill(1); err != nil {
				return err
			}
		}
		c := int64(in.end - in.pos)
		if c > n {
			c = n
		}
		if w != nil {
			w.Write(in.buf[in.pos : in.pos+int(c)])
		}
		in.pos += int(c)
		n -= c
	}
	return nil
}

// atEOF reports whether nothing follows the consumed bytes.
func (in *input) atEOF() bool {
	return in.fill(1) != nil && in.pos >= in.end
}
