package rdb

import "encoding/binary"

// The RDB trailer is CRC-64/Jones as Redis computes it: reflected
// polynomial 0xad93d23594c935a9, initial value 0, no final xor. Its check
// value over "123456789" is 0xe9c6d914c4b8d9ca.
const crc64Reflected = 0x95ac9329ac4bc9b5 // 0xad93d23594c935a9 bit-reversed

// crcTables is slicing-by-8: crcTables[k][b] is the CRC of byte b
// followed by k zero bytes.
var crcTables = func() (t [8][256]uint64) {
	for i := range 256 {
		c := uint64(i)
		for range 8 {
			if c&1 == 1 {
				c = c>>1 ^ crc64Reflected
			} else {
				c >>= 1
			}
		}
		t[0][i] = c
	}
	for i := range 256 {
		c := t[0][i]
		for k := 1; k < 8; k++ {
			c = t[0][c&0xff] ^ c>>8
			t[k][i] = c
		}
	}
	return t
}()

// crcLane is the length of each of the three lanes crc64Update runs side
// by side: one lane waits on its table loads, three keep the CPU busy.
const crcLane = 8 << 10

// crcShift1 and crcShift2 multiply a CRC by x^(8·crcLane) and
// x^(16·crcLane): what appending one or two lanes of zeros does to it.
var crcShift1, crcShift2 = x8nModP(crcLane), x8nModP(2 * crcLane)

// crc64Update is the CRC of p continuing from crc. The whole file passes
// through it, so long inputs go three lanes at a time, combined after.
func crc64Update(crc uint64, p []byte) uint64 {
	for len(p) >= 3*crcLane {
		a, b, c := crcSlicing8(crc, 0, 0, p[:crcLane], p[crcLane:2*crcLane], p[2*crcLane:3*crcLane])
		crc = mulModP(a, crcShift2) ^ mulModP(b, crcShift1) ^ c
		p = p[3*crcLane:]
	}
	return crcSimple(crc, p)
}

// crcSlicing8 runs three CRCs over lanes of one length, eight bytes per
// step each.
func crcSlicing8(a, b, c uint64, pa, pb, pc []byte) (uint64, uint64, uint64) {
	t := &crcTables
	for len(pa) >= 8 && len(pb) >= 8 && len(pc) >= 8 {
		a ^= binary.LittleEndian.Uint64(pa)
		b ^= binary.LittleEndian.Uint64(pb)
		c ^= binary.LittleEndian.Uint64(pc)
		a = t[7][a&0xff] ^ t[6][a>>8&0xff] ^ t[5][a>>16&0xff] ^ t[4][a>>24&0xff] ^
			t[3][a>>32&0xff] ^ t[2][a>>40&0xff] ^ t[1][a>>48&0xff] ^ t[0][a>>56]
		b = t[7][b&0xff] ^ t[6][b>>8&0xff] ^ t[5][b>>16&0xff] ^ t[4][b>>24&0xff] ^
			t[3][b>>32&0xff] ^ t[2][b>>40&0xff] ^ t[1][b>>48&0xff] ^ t[0][b>>56]
		c = t[7][c&0xff] ^ t[6][c>>8&0xff] ^ t[5][c>>16&0xff] ^ t[4][c>>24&0xff] ^
			t[3][c>>32&0xff] ^ t[2][c>>40&0xff] ^ t[1][c>>48&0xff] ^ t[0][c>>56]
		pa, pb, pc = pa[8:], pb[8:], pc[8:]
	}
	return crcSimple(a, pa), crcSimple(b, pb), crcSimple(c, pc)
}

// crcSimple is slicing-by-8 over one input.
func crcSimple(crc uint64, p []byte) uint64 {
	t := &crcTables
	for len(p) >= 8 {
		crc ^= binary.LittleEndian.Uint64(p)
		crc = t[7][crc&0xff] ^ t[6][crc>>8&0xff] ^ t[5][crc>>16&0xff] ^ t[4][crc>>24&0xff] ^
			t[3][crc>>32&0xff] ^ t[2][crc>>40&0xff] ^ t[1][crc>>48&0xff] ^ t[0][crc>>56]
		p = p[8:]
	}
	for _, b := range p {
		crc = t[0][byte(crc)^b] ^ crc>>8
	}
	return crc
}

// mulModP multiplies two polynomials modulo the CRC's, both bit-reversed
// as the CRC holds them (zlib's multmodp): the top bit is x^0.
func mulModP(a, b uint64) uint64 {
	var p uint64
	for m := uint64(1) << 63; m != 0; m >>= 1 {
		if a&m != 0 {
			p ^= b
		}
		if b&1 != 0 {
			b = b>>1 ^ crc64Reflected
		} else {
			b >>= 1
		}
	}
	return p
}

// x8nModP is x^(8n) modulo the CRC's polynomial: the factor n zero bytes
// appended multiply a CRC by.
func x8nModP(n int) uint64 {
	p := uint64(1) << 63  // x^0
	sq := uint64(1) << 55 // x^8, then x^(8·2^k) as k goes
	for ; n > 0; n >>= 1 {
		if n&1 != 0 {
			p = mulModP(p, sq)
		}
		sq = mulModP(sq, sq)
	}
	return p
}
