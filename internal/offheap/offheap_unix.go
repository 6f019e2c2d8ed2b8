//go:build unix && !idemctl_heaparena

package offheap

import "syscall"

// Mapped reports whether Alloc maps memory outside the heap.
const Mapped = true

// Alloc returns n bytes of anonymous mapped memory, or of the heap when
// the mapping fails (the heap still works).
func Alloc(n int) []byte {
	b, err := syscall.Mmap(-1, 0, n, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		return make([]byte, n) // no mapping: the heap still works
	}
	return b
}

// Free returns a block from Alloc. A heap fallback block is left
// to the collector (Munmap refuses it).
func Free(b []byte) { _ = syscall.Munmap(b) }
