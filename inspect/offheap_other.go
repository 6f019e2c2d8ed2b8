//go:build !unix || idemctl_heaparena

package inspect

const offHeapMapped = false

// offHeap falls back to the Go heap where there is no anonymous mmap (and
// under the idemctl_heaparena tag, to measure the difference).
func offHeap(n int) []byte { return make([]byte, n) }

func freeOffHeap([]byte) {}
