package inspect

import "unsafe"

// arena copies many small strings into shared blocks: one allocation for
// hundreds of records' keys and fields instead of one each (a snapshot
// yields a million records a second). A block lives while any string in
// it does, and its bytes are never written again once handed out.
type arena struct{ buf []byte }

const strArenaBlock = 64 << 10

func (a *arena) str(b []byte) string {
	switch {
	case len(b) == 0:
		return ""
	case len(b) > strArenaBlock/16:
		return string(b) // a big value: its own allocation
	}
	if cap(a.buf)-len(a.buf) < len(b) {
		a.buf = make([]byte, 0, strArenaBlock)
	}
	n := len(a.buf)
	a.buf = append(a.buf, b...)
	return unsafe.String(&a.buf[n], len(b))
}

// view is b as a string for a comparison, without a copy: valid only
// while b is.
func view(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}
