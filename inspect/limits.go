package inspect

// Bounds of the scan settings: beyond them a setting is a typo, and would
// cost memory (a batch is allocated at --count keys) or break a throttle.
const (
	MaxScanCount  = 100_000    // SCAN COUNT and keys per pipeline
	MaxKeysPerSec = 10_000_000 // a throttle above this is no throttle
	MaxInFlight   = 64         // pipelines in flight
	MaxScanNodes  = 1024       // cluster nodes scanned at a time
	MaxValueCap   = 512 << 20  // Redis's own largest value
)
