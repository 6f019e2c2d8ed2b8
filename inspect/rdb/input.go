package rdb

import (
	"errors"
	"io"
	"os"
)

// input is a buffered reader that knows its offset in the file and keeps
// the running CRC-64 of everything consumed, so the trailer can be checked
// without a second pass or a copy of the file. It reads into two buffers
// in turn: while it parses one, another goroutine computes the CRC of
// what was consumed of the other and, from a regular file, reads the next
// megabyte into it.
type input struct {
	r      io.Reader
	ahead  bool   // r is a regular file: read ahead, a read never blocks for long
	buf    []byte // the bytes being parsed: a window on cur
	cur    []byte // the buffer buf is on
	spare  []byte // the other buffer, which a job in progress may be using
	pos    int    // next unread byte in buf
	end    int    // bytes valid in buf
	crcPos int    // bytes of buf already in crc
	base   int64  // file offset of buf[0]
	crc    uint64 // of the file up to buf[crcPos], once no job is in progress
	jobOut chan jobResult
	busy   bool  // a job is in progress: jobOut will have its result
	pre    int   // bytes read ahead into spare[aheadAt:]
	err    error // the read error that ended the input (io.EOF at the end)
}

// jobResult is what a background job did: the CRC, and what it read ahead.
type jobResult struct {
	crc uint64
	n   int
	err error
}

const inputBuf = 1 << 20

// aheadAt is where the read-ahead goes in the spare buffer: the room
// before it takes the unread tail of the other (usually a few bytes).
const aheadAt = 64 << 10

// asyncCRC is the least a CRC is handed to another goroutine for, when
// nothing is read ahead: less costs more to hand over than to compute.
const asyncCRC = 64 << 10

func newInput(r io.Reader) *input {
	in := &input{r: r, cur: make([]byte, inputBuf), spare: make([]byte, inputBuf), jobOut: make(chan jobResult, 1)}
	in.buf = in.cur
	if f, ok := r.(*os.File); ok {
		fi, err := f.Stat()
		in.ahead = err == nil && fi.Mode().IsRegular()
	}
	return in
}

// offset is the file offset of the next unread byte.
func (in *input) offset() int64 { return in.base + int64(in.pos) }

// settle waits for the job in progress, if any.
func (in *input) settle() {
	if !in.busy {
		return
	}
	res := <-in.jobOut
	in.busy, in.crc, in.pre = false, res.crc, res.n
	if res.err != nil {
		in.err = res.err
	}
}

// sum folds the consumed bytes into the CRC and returns it.
func (in *input) sum() uint64 {
	in.settle()
	in.crc = crc64Update(in.crc, in.buf[in.crcPos:in.pos])
	in.crcPos = in.pos
	return in.crc
}

// fill makes at least n bytes available (n ≤ inputBuf), or returns the
// error that prevented it: io.ErrUnexpectedEOF for a file that ends early.
// The unread bytes move to the spare buffer, before what was read ahead
// into it; then a job sums the consumed ones and reads ahead into the
// buffer left, until the next fill or sum.
func (in *input) fill(n int) error {
	if in.end-in.pos >= n {
		return nil
	}
	in.settle() // the spare is free
	done, old := in.buf[in.crcPos:in.pos], in.cur
	in.take(in.buf[in.pos:in.end], n)
	in.base += int64(in.pos)
	in.pos, in.crcPos = 0, 0
	for in.end < n {
		if in.err != nil {
			in.crc = crc64Update(in.crc, done)
			return in.short()
		}
		m, err := in.r.Read(in.buf[in.end:])
		in.end += m
		if err != nil {
			in.err = err
		}
	}
	ahead := in.ahead && in.err == nil
	if !ahead && len(done) < asyncCRC {
		in.crc = crc64Update(in.crc, done)
		return nil
	}
	in.busy = true
	go in.job(in.crc, done, old, ahead)
	return nil
}

// take makes the spare buffer current, holding the unread tail and then
// what was read ahead, with room for n bytes.
func (in *input) take(tail []byte, n int) {
	next := in.spare
	in.spare, in.cur = in.cur, next
	pre := next[aheadAt : aheadAt+in.pre]
	in.end, in.pre = len(tail)+len(pre), 0
	if len(pre) > 0 && len(tail) <= aheadAt && len(next)-aheadAt+len(tail) >= n {
		in.buf = next[aheadAt-len(tail):] // the usual: the tail fits before the read-ahead
		copy(in.buf, tail)
		return
	}
	if in.end > len(next) { // a long tail and a full read-ahead: a bigger buffer for once
		next = make([]byte, in.end)
		in.cur = next
	}
	copy(next[len(tail):], pre)
	copy(next, tail)
	in.buf = next
}

// job sums done from crc, then reads ahead into buf[aheadAt:].
func (in *input) job(crc uint64, done, buf []byte, ahead bool) {
	res := jobResult{crc: crc64Update(crc, done)}
	for ahead && res.n < len(buf)-aheadAt && res.err == nil {
		var m int
		m, res.err = in.r.Read(buf[aheadAt+res.n:])
		res.n += m
	}
	in.jobOut <- res
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
