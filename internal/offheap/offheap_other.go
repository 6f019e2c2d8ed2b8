//go:build !unix || idemctl_heaparena

package offheap

// Mapped reports whether Alloc maps memory outside the heap.
const Mapped = false

// Alloc falls back to the Go heap where there is no anonymous mmap (and
// under the idemctl_heaparena tag, to measure the difference).
func Alloc(n int) []byte { return make([]byte, n) }

// Free does nothing: the collector frees the heap's blocks.
func Free([]byte) {}
