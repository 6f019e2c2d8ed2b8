// Package offheap hands out memory outside the Go heap: the garbage
// collector neither scans it nor counts it toward GOGC's headroom, so a
// store's held bytes cost their size once, not up to twice. Measured on
// 3M held records (VmHWM): 243 MB mapped, 383 MB with the same blocks on
// the heap (-tags idemctl_heaparena), 273 MB on the heap under a memory
// limit sized to fit (GOMEMLIMIT=260MiB) — and a limit would have to be
// sized from what is held, and makes the collector run hot near it. The
// blocks must hold no Go pointers. The packed record store and the
// fingerprint deduplicator keep their blocks here.
//
// Floor 0 of ARCHITECTURE.md, a foundation: it imports no idemctl package.
package offheap
