//go:build unix

package inspect

import "syscall"

// allocOffHeap maps n zeroed bytes outside the Go heap: the collector
// neither scans them nor lets the heap grow to twice them, and freeOffHeap
// gives them back to the system at once. Where mapping fails, the heap.
func allocOffHeap(n int) []byte {
	b, err := syscall.Mmap(-1, 0, n, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		return make([]byte, n)
	}
	return b
}

// freeOffHeap unmaps b; a heap fallback is refused (EINVAL: syscall
// knows what it mapped) and left to the collector.
func freeOffHeap(b []byte) { _ = syscall.Munmap(b) }
