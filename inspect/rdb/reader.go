// Package rdb reads Redis and Valkey snapshot (RDB) files as a stream: one
// key at a time, with bounded memory, checking the CRC-64 trailer as it
// goes. It decodes what an idempotency record can be (strings and hashes,
// with their expiry and per-field TTLs) and skips every other type, opcode
// and module value without decoding it. It imports nothing of idemctl:
// inspect turns its entries into records.
//
// Written from the format as Redis (rdb.h, rdb.c, listpack.c, ziplist.c,
// zipmap.c, lzf_d.c) defines it, versions 1 to 12.
//
// Floor 0 of ARCHITECTURE.md, a foundation: it imports no idemctl package
// but other foundations.
package rdb

import (
	"crypto/sha1"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"io"
	"strconv"
	"time"
)

// MaxVersion is the newest RDB version this reader knows (Redis 7.4 and
// 8.x write 12, Redis 7.0–7.2 and Valkey 8 write 10 and 11).
const MaxVersion = 12

// Options bound what one key may cost to read.
type Options struct {
	// MaxBlob bounds one encoded value read whole (a listpack, a
	// compressed string): a larger one is skipped and its entry says so
	// (default 64 MiB).
	MaxBlob int
	// MaxKey bounds a key's length: longer keys are skipped, counted in
	// Stats (default 64 KiB).
	MaxKey int
	// Digest computes the SHA-1 of every string value and hash field read
	// (ValueDigest, HashField.Digest): what pins a record's version as the
	// server's own SHA1HEX would.
	Digest bool
}

// Header is what a snapshot says of itself.
type Header struct {
	Version int
	// Aux holds the file's aux fields (redis-ver, ctime, used-mem, …),
	// each cut to 256 bytes, at most 64 of them.
	Aux map[string]string
	// CTime is when the snapshot was taken, from the ctime aux field (zero
	// when the file has none).
	CTime time.Time
}

// Checksum is what the trailer said.
type Checksum int

const (
	ChecksumNone     Checksum = iota // a version before 5: no trailer
	ChecksumDisabled                 // written with rdbchecksum no (all zero)
	ChecksumOK
)

func (c Checksum) String() string {
	switch c {
	case ChecksumDisabled:
		return "disabled (rdbchecksum no)"
	case ChecksumOK:
		return "verified"
	}
	return "none (RDB version before 5)"
}

// Stats counts what the reader met besides the entries it returned.
type Stats struct {
	Keys        int64 // every key in the file, all databases
	LongKeys    int64 // keys over MaxKey, skipped
	Databases   int   // SELECTDB opcodes
	Checksum    Checksum
	BytesRead   int64
	ModuleValue int64 // module values skipped
}

// Reader yields a snapshot's keys in file order.
type Reader struct {
	in    *input
	opt   Options
	hdr   Header
	stats Stats
	db    int

	cur     Entry
	pending bool  // cur's value not yet consumed
	valAt   int64 // where cur's value starts
	mem     int64 // cur's memory estimate, once its value is consumed

	keyBuf, valBuf, nameBuf, blobBuf, lzfBuf, lzfOut, intBuf []byte
	done                                                     bool
	field                                                    HashField // handed to a FieldReader

	digest hash.Hash // nil unless Options.Digest
	sum    [sha1.Size]byte
	sumOK  bool
}

// NewReader reads and checks the file's header.
func NewReader(r io.Reader, opt Options) (*Reader, error) {
	if opt.MaxBlob <= 0 {
		opt.MaxBlob = 64 << 20
	}
	if opt.MaxKey <= 0 {
		opt.MaxKey = 64 << 10
	}
	rd := &Reader{in: newInput(r), opt: opt, hdr: Header{Aux: map[string]string{}}}
	if opt.Digest {
		rd.digest = sha1.New()
	}
	magic, err := rd.in.next(9)
	if err != nil {
		if rd.in.offset() == 0 && rd.in.end == 0 && errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, &FormatError{Offset: 0, Msg: "the file is empty: expected an RDB header (REDIS and a version)", Truncated: true}
		}
		if have := rd.in.buf[:min(rd.in.end, 5)]; string(have) != "REDIS"[:len(have)] {
			return nil, notRDB(have)
		}
		return nil, rd.fail(err, "the RDB header (REDIS and a four-digit version)")
	}
	if string(magic[:5]) != "REDIS" {
		return nil, notRDB(magic[:5])
	}
	v, err := strconv.Atoi(string(magic[5:]))
	if err != nil || v < 1 {
		return nil, &FormatError{Offset: 5, Msg: fmt.Sprintf("expected a four-digit RDB version, found %s", printable(magic[5:]))}
	}
	if v > MaxVersion {
		return nil, &FormatError{Offset: 5, Msg: fmt.Sprintf("RDB version %d is newer than this reader knows (up to %d): the server that wrote it is newer than idemctl", v, MaxVersion)}
	}
	rd.hdr.Version = v
	return rd, nil
}

func notRDB(magic []byte) error {
	return &FormatError{Offset: 0, Msg: fmt.Sprintf("not an RDB file: expected REDIS, found %s", printable(magic))}
}

// Header is the file's header, with the aux fields read so far (they come
// before the first key in every file Redis writes).
func (r *Reader) Header() Header { return r.hdr }

// Server names the server that wrote the file and its version, from the
// aux fields ("Valkey 8.1.1", "Redis 7.0.15"); empty when the file does
// not say.
func (h Header) Server() string {
	if v := h.Aux["valkey-ver"]; v != "" {
		return "Valkey " + v
	}
	if v := h.Aux["redis-ver"]; v != "" {
		return "Redis " + v
	}
	return ""
}

// Stats says what the reader has met; Checksum is set once Next returned
// io.EOF.
func (r *Reader) Stats() Stats {
	s := r.stats
	s.BytesRead = r.in.offset()
	return s
}

// Type is a value's type, as TYPE names it.
type Type uint8

const (
	TypeString Type = iota + 1
	TypeList
	TypeSet
	TypeZSet
	TypeHash
	TypeStream
	TypeModule
)

func (t Type) String() string {
	switch t {
	case TypeString:
		return "string"
	case TypeList:
		return "list"
	case TypeSet:
		return "set"
	case TypeZSet:
		return "zset"
	case TypeHash:
		return "hash"
	case TypeStream:
		return "stream"
	case TypeModule:
		return "module"
	}
	return "unknown"
}

// Entry is one key. Key is valid until the next call of Next.
type Entry struct {
	DB       int
	Key      []byte
	Type     Type
	Encoding string // how the file holds it: raw, int, lzf, listpack, ziplist, zipmap, hashtable, …
	ExpireMs int64  // absolute Unix time in ms; -1: none
	Offset   int64  // where the key's record starts in the file
	rdbType  byte
}

// Next returns the next key of any database, having skipped what the
// caller did not read of the previous one. At the end of the file (after
// the trailer was checked) it returns io.EOF; a fault is a *FormatError
// naming the byte offset.
func (r *Reader) Next() (*Entry, error) {
	if r.done {
		return nil, io.EOF
	}
	if r.pending {
		if err := r.skipValue(); err != nil {
			return nil, err
		}
	}
	expire := int64(-1)
	for {
		at := r.in.offset()
		op, err := r.in.byte()
		if err != nil {
			return nil, r.fail(err, "an opcode or a key's type (the file has no end marker)")
		}
		switch op {
		case opEOF:
			return nil, r.trailer(at)
		case opSelectDB:
			n, err := r.length("a database number")
			if err != nil {
				return nil, err
			}
			r.db = int(min(n, 1<<31-1))
			r.stats.Databases++
		case opExpireMs:
			b, err := r.in.next(8)
			if err != nil {
				return nil, r.fail(err, "an 8-byte expiry time")
			}
			expire = int64(binary.LittleEndian.Uint64(b))
		case opExpire:
			b, err := r.in.next(4)
			if err != nil {
				return nil, r.fail(err, "a 4-byte expiry time")
			}
			expire = int64(int32(binary.LittleEndian.Uint32(b))) * 1000
		default:
			if isObjectType(op) {
				return r.entry(op, at, expire)
			}
			if err := r.opcode(op, at); err != nil {
				return nil, err
			}
		}
	}
}

func (r *Reader) entry(op byte, at, expire int64) (*Entry, error) {
	if op == typeModulePreGA {
		return nil, &FormatError{Offset: at, Msg: "a module value in the pre-release (4.0 RC) format, which cannot be skipped without its module"}
	}
	key, full, err := r.stringCapped(&r.keyBuf, r.opt.MaxKey, "a key")
	if err != nil {
		return nil, err
	}
	r.stats.Keys++
	r.cur = Entry{DB: r.db, Key: key, Type: typeOf(op), Encoding: encodingOf(op), ExpireMs: expire, Offset: at, rdbType: op}
	r.pending, r.valAt, r.mem = true, r.in.offset(), -1
	if full > int64(len(key)) {
		r.stats.LongKeys++
		if err := r.skipValue(); err != nil {
			return nil, err
		}
		return r.Next()
	}
	return &r.cur, nil
}

// opcode consumes an opcode that carries no key.
func (r *Reader) opcode(op byte, at int64) error {
	switch op {
	case opAux:
		k, _, err := r.stringCapped(&r.nameBuf, 256, "an aux field's name")
		if err != nil {
			return err
		}
		name := string(k)
		v, _, err := r.stringCapped(&r.valBuf, 256, "the value of aux field "+printable([]byte(name)))
		if err != nil {
			return err
		}
		if len(r.hdr.Aux) < 64 {
			r.hdr.Aux[name] = string(v)
		}
		if name == "ctime" {
			if s, err := strconv.ParseInt(string(v), 10, 64); err == nil && s > 0 {
				r.hdr.CTime = time.Unix(s, 0).UTC()
			}
		}
		return nil
	case opResizeDB:
		if _, err := r.length("a database size hint"); err != nil {
			return err
		}
		_, err := r.length("an expiry table size hint")
		return err
	case opSlotInfo:
		for _, what := range []string{"a slot id", "a slot's size", "a slot's expiry count"} {
			if _, err := r.length(what); err != nil {
				return err
			}
		}
		return nil
	case opIdle:
		_, err := r.length("an LRU idle time")
		return err
	case opFreq:
		_, err := r.in.byte()
		return r.fail(err, "an LFU frequency")
	case opFunction2:
		return r.skipString("a function library")
	case opFunctionPreGA:
		return &FormatError{Offset: at, Msg: "function libraries in the pre-release (7.0 RC) format, which no released server reads"}
	case opModuleAux:
		if _, err := r.length("a module id"); err != nil {
			return err
		}
		if w, err := r.length("a module aux field's when-opcode"); err != nil {
			return err
		} else if w != moduleOpUint {
			return &FormatError{Offset: r.in.offset(), Msg: fmt.Sprintf("expected a module aux when-opcode of %d, found %d", moduleOpUint, w)}
		}
		if _, err := r.length("a module aux field's when"); err != nil {
			return err
		}
		return r.skipModuleOps()
	}
	return &FormatError{Offset: at, Msg: fmt.Sprintf("unknown opcode or value type %d: expected a key's type (0–25) or an opcode (244–255)", op)}
}

// trailer checks the CRC-64 after the EOF opcode at offset at.
func (r *Reader) trailer(at int64) error {
	r.done = true
	if r.hdr.Version < 5 {
		r.stats.Checksum = ChecksumNone
		return io.EOF
	}
	want := r.in.sum()
	b, err := r.in.next(8)
	if err != nil {
		return r.fail(err, "the 8-byte checksum after the end marker")
	}
	got := binary.LittleEndian.Uint64(b)
	switch {
	case got == 0:
		r.stats.Checksum = ChecksumDisabled
	case got != want:
		return &FormatError{Offset: at + 1, Msg: fmt.Sprintf("checksum mismatch: the file says %016x, its contents give %016x (the file is damaged)", got, want)}
	default:
		r.stats.Checksum = ChecksumOK
	}
	return io.EOF
}

// MemoryEstimate is an estimate of the current key's memory in the server
// from its encoding in the file; its value is read (or skipped) first.
func (r *Reader) MemoryEstimate() (int64, error) {
	if r.pending {
		if err := r.skipValue(); err != nil {
			return -1, err
		}
	}
	return r.mem, nil
}

// FormatError is a fault in the file: where, and what was expected.
type FormatError struct {
	Offset int64
	Msg    string
	// Truncated: the file ended early (a copy still being written, a
	// stream cut off).
	Truncated bool
}

func (e *FormatError) Error() string { return fmt.Sprintf("at byte %d: %s", e.Offset, e.Msg) }

// fail turns a read error while reading what into a FormatError.
func (r *Reader) fail(err error, what string) error {
	if err == nil {
		return nil
	}
	var fe *FormatError
	if errors.As(err, &fe) {
		return err
	}
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return &FormatError{Offset: r.in.base + int64(r.in.end), Msg: "the file ends inside " + what + " (truncated)", Truncated: true}
	}
	return &FormatError{Offset: r.in.offset(), Msg: fmt.Sprintf("reading %s: %v", what, err)}
}

// printable quotes bytes from the file for a message.
func printable(b []byte) string {
	if len(b) > 32 {
		b = b[:32]
	}
	return strconv.QuoteToASCII(string(b))
}
