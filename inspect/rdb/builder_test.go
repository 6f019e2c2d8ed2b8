package rdb

import (
	"encoding/binary"
	"fmt"
)

// file builds RDB files by hand, for the encodings no server at hand
// writes any more (zipmap, ziplist, the 7.4 RC types) and for faults.
type file struct{ b []byte }

func newFile(version int) *file {
	return &file{b: fmt.Appendf(nil, "REDIS%04d", version)}
}

func (f *file) op(b ...byte) *file { f.b = append(f.b, b...); return f }

func (f *file) len(n uint64) *file {
	switch {
	case n < 1<<6:
		f.b = append(f.b, byte(n))
	case n < 1<<14:
		f.b = append(f.b, byte(n>>8)|0x40, byte(n))
	case n <= 1<<32-1:
		f.b = append(f.b, 0x80)
		f.b = binary.BigEndian.AppendUint32(f.b, uint32(n))
	default:
		f.b = append(f.b, 0x81)
		f.b = binary.BigEndian.AppendUint64(f.b, n)
	}
	return f
}

func (f *file) str(s string) *file { f.len(uint64(len(s))); f.b = append(f.b, s...); return f }

func (f *file) aux(k, v string) *file { return f.op(opAux).str(k).str(v) }

func (f *file) expireMs(ms int64) *file {
	f.op(opExpireMs)
	f.b = binary.LittleEndian.AppendUint64(f.b, uint64(ms))
	return f
}

func (f *file) u64(v uint64) *file { f.b = binary.LittleEndian.AppendUint64(f.b, v); return f }

// end writes the EOF opcode and the trailer: the real CRC, or zero.
func (f *file) end(crc bool) []byte {
	f.op(opEOF)
	sum := uint64(0)
	if crc {
		sum = crc64Update(0, f.b)
	}
	return binary.LittleEndian.AppendUint64(f.b, sum)
}

// listpack encodes elements: an int64 as an integer, a string as a string.
func listpack(elems ...any) string {
	var body []byte
	for _, e := range elems {
		var ent []byte
		switch v := e.(type) {
		case int:
			switch {
			case v >= 0 && v < 128:
				ent = []byte{byte(v)}
			case v >= -4096 && v < 4096:
				u := uint16(v) & 0x1fff
				ent = []byte{0xc0 | byte(u>>8), byte(u)}
			case v >= -32768 && v < 32768:
				ent = binary.LittleEndian.AppendUint16([]byte{0xf1}, uint16(v))
			default:
				ent = binary.LittleEndian.AppendUint64([]byte{0xf4}, uint64(v))
			}
		case string:
			switch {
			case len(v) < 64:
				ent = append([]byte{0x80 | byte(len(v))}, v...)
			case len(v) < 4096:
				ent = append([]byte{0xe0 | byte(len(v)>>8), byte(len(v))}, v...)
			default:
				ent = append(binary.LittleEndian.AppendUint32([]byte{0xf0}, uint32(len(v))), v...)
			}
		}
		body = append(body, ent...)
		body = append(body, backlen(len(ent))...)
	}
	out := binary.LittleEndian.AppendUint32(nil, uint32(6+len(body)+1))
	out = binary.LittleEndian.AppendUint16(out, uint16(len(elems)))
	out = append(append(out, body...), 0xff)
	return string(out)
}

// backlen is listpack's reversed 7-bit length of an entry.
func backlen(n int) []byte {
	var out []byte
	for i := backlenSize(n) - 1; i >= 0; i-- {
		b := byte(n>>(7*i)) & 0x7f
		if i > 0 {
			b |= 0x80
		}
		out = append(out, b)
	}
	return out
}

// ziplist encodes elements the way Redis 3.2–6.2 did.
func ziplist(elems ...any) string {
	var body []byte
	prev := 0
	for _, e := range elems {
		var ent []byte
		if prev < 254 {
			ent = []byte{byte(prev)}
		} else {
			ent = binary.LittleEndian.AppendUint32([]byte{0xfe}, uint32(prev))
		}
		switch v := e.(type) {
		case int:
			switch {
			case v >= 0 && v <= 12:
				ent = append(ent, 0xf1+byte(v))
			case v >= -128 && v < 128:
				ent = append(ent, 0xfe, byte(v))
			case v >= -32768 && v < 32768:
				ent = binary.LittleEndian.AppendUint16(append(ent, 0xc0), uint16(v))
			case v >= -(1<<23) && v < 1<<23:
				u := uint32(v)
				ent = append(ent, 0xf0, byte(u), byte(u>>8), byte(u>>16))
			default:
				ent = binary.LittleEndian.AppendUint64(append(ent, 0xe0), uint64(v))
			}
		case string:
			switch {
			case len(v) < 64:
				ent = append(ent, byte(len(v)))
			case len(v) < 16384:
				ent = append(ent, 0x40|byte(len(v)>>8), byte(len(v)))
			default:
				ent = binary.BigEndian.AppendUint32(append(ent, 0x80), uint32(len(v)))
			}
			ent = append(ent, v...)
		}
		body = append(body, ent...)
		prev = len(ent)
	}
	out := binary.LittleEndian.AppendUint32(nil, uint32(10+len(body)+1))
	out = binary.LittleEndian.AppendUint32(out, uint32(10+len(body)-prev))
	out = binary.LittleEndian.AppendUint16(out, uint16(len(elems)))
	out = append(append(out, body...), 0xff)
	return string(out)
}

// zipmap encodes pairs the way Redis before 2.6 did.
func zipmap(kv ...string) string {
	out := []byte{byte(len(kv) / 2)}
	zlen := func(n int) {
		if n < 254 {
			out = append(out, byte(n))
			return
		}
		out = binary.LittleEndian.AppendUint32(append(out, 254), uint32(n))
	}
	for i := 0; i < len(kv); i += 2 {
		zlen(len(kv[i]))
		out = append(out, kv[i]...)
		zlen(len(kv[i+1]))
		out = append(out, 2) // two bytes of free space after the value
		out = append(out, kv[i+1]...)
		out = append(out, 0, 0)
	}
	return string(append(out, 0xff))
}
