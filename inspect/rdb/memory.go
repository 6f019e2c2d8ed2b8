package rdb

import "math/bits"

// The memory estimate follows what MEMORY USAGE counts (object.c): the
// main dict's entry, the key's sds, the value object and what it points
// to, each rounded to the allocator's size class. It leaves out the
// expiry dict, as MEMORY USAGE does. Servers differ (Valkey 8 embeds the
// key in the object), so the figure is flagged as an estimate.
const (
	dictEntry  = 24 // a dict entry: key, value, next
	robj       = 16 // a redisObject header
	dictHeader = 56 // a dict's own struct
	embstrMax  = 44 // strings up to this long share one allocation with their object
)

// sdsSize is the allocation of an sds of n bytes: header, bytes, NUL.
func sdsSize(n int64) int64 {
	hdr := int64(9)
	switch {
	case n < 1<<8:
		hdr = 3
	case n < 1<<16:
		hdr = 5
	case n < 1<<32:
		hdr = 9
	}
	return sizeClass(hdr + n + 1)
}

// sizeClass rounds n up to a jemalloc size class: 8, then steps of 16 to
// 128, then four classes per doubling.
func sizeClass(n int64) int64 {
	switch {
	case n <= 8:
		return 8
	case n <= 128:
		return (n + 15) &^ 15
	}
	p := int64(1) << (bits.Len64(uint64(n-1)) - 1)
	step := p / 4
	return (n + step - 1) / step * step
}

func keyOverhead(keyLen int) int64 { return dictEntry + sdsSize(int64(keyLen)) }

// estimateString is a string key's estimate: an integer lives in its
// object, a short string in one allocation with it, a long one apart.
func estimateString(keyLen int, valLen int64, isInt bool) int64 {
	switch {
	case isInt:
		return keyOverhead(keyLen) + robj
	case valLen <= embstrMax:
		return keyOverhead(keyLen) + sizeClass(robj+3+valLen+1)
	}
	return keyOverhead(keyLen) + robj + sdsSize(valLen)
}

// estimateEncoded is the estimate of a value held as one blob (a listpack
// or ziplist), which the server keeps as it is in the file.
func estimateEncoded(keyLen, blobLen int) int64 {
	return keyOverhead(keyLen) + robj + sizeClass(int64(blobLen))
}

// dictTable is the bucket array of a dict of n entries: the next power of
// two, 8 bytes each.
func dictTable(n uint64) int64 {
	if n < 4 {
		return 4 * 8
	}
	return sizeClass(int64(8) << bits.Len64(n-1))
}
