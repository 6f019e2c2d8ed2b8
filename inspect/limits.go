package inspect

// Bounds of the scan settings: beyond them a setting is a typo, and would
// cost memory (a batch is allocated at --count keys) or break a throttle.
const (
	// DefaultScanCount is SCAN COUNT and keys per pipeline unless set. A
	// batch this small is still in the server's CPU caches when its second
	// pipeline reads the same keys again: at 10M records (redis-server 7.0,
	// first 2M keys, 4 in flight) 100–250 cost the server 11.3–12.0 s and
	// 400–4,000 cost 15.5–18.0 s, with HMGET at 0.7–1.1 µs a call against
	// 1.9–2.4 µs.
	DefaultScanCount = 200
	MaxScanCount     = 100_000    // SCAN COUNT and keys per pipeline
	MaxKeysPerSec    = 10_000_000 // a throttle above this is no throttle
	MaxInFlight      = 64         // pipelines in flight
	MaxScanNodes     = 1024       // cluster nodes scanned at a time
	MaxValueCap      = 512 << 20  // Redis's own largest value
)
