package rdb

import "fmt"

// lzfDecode decompresses an LZF block (as Redis compresses strings in RDB
// files) into dst, which has room for exactly the uncompressed length, or
// for a prefix of it: decoding stops once dst is full, since a back
// reference only ever reads what came before. It returns how much of dst
// it wrote, or where in the block the data is corrupt.
func lzfDecode(src, dst []byte, prefix bool) (int, error) {
	ip, op := 0, 0
	for ip < len(src) {
		if op == len(dst) {
			if prefix {
				return op, nil
			}
			return op, fmt.Errorf("compressed data at byte %d decodes past the stated length %d", ip, len(dst))
		}
		ctrl := int(src[ip])
		ip++
		if ctrl < 1<<5 { // a literal run of ctrl+1 bytes
			n := ctrl + 1
			if ip+n > len(src) {
				return op, fmt.Errorf("literal run of %d bytes at byte %d overruns the compressed data", n, ip-1)
			}
			if op+n > len(dst) {
				if !prefix {
					return op, fmt.Errorf("literal run at byte %d decodes past the stated length %d", ip-1, len(dst))
				}
				n = len(dst) - op
			}
			copy(dst[op:], src[ip:ip+n])
			ip, op = ip+ctrl+1, op+n
			continue
		}
		n := ctrl >> 5
		at := ip - 1
		if n == 7 {
			if ip >= len(src) {
				return op, fmt.Errorf("back reference at byte %d is cut short", at)
			}
			n += int(src[ip])
			ip++
		}
		if ip >= len(src) {
			return op, fmt.Errorf("back reference at byte %d is cut short", at)
		}
		ref := op - (ctrl&0x1f)<<8 - int(src[ip]) - 1
		ip++
		n += 2
		if ref < 0 {
			return op, fmt.Errorf("back reference at byte %d points before the start of the data", at)
		}
		if op+n > len(dst) {
			if !prefix {
				return op, fmt.Errorf("back reference at byte %d decodes past the stated length %d", at, len(dst))
			}
			n = len(dst) - op
		}
		for i := range n { // byte by byte: the copy may overlap itself
			dst[op+i] = dst[ref+i]
		}
		op += n
	}
	if op != len(dst) && !prefix {
		return op, fmt.Errorf("decodes to %d bytes, not the stated %d", op, len(dst))
	}
	return op, nil
}
