package audit

import "encoding/base64"

// RunPlan is the body of a plan entry: the run's targets, in parts of at
// most planPartKeys keys, so a line stays bounded however many keys a run
// has.
type RunPlan struct {
	Part       int      `json:"part"`
	Parts      int      `json:"parts"`
	Planned    int      `json:"planned"`  // targets in the whole run
	Runnable   int      `json:"runnable"` // of those, the ones planned to be written
	KeysSHA256 string   `json:"keys_sha256"`
	Keys       []string `json:"keys"`
	// KeysBase64 holds, by index in Keys, the exact bytes of keys that are
	// not UTF-8.
	KeysBase64 map[int]string `json:"keys_base64,omitempty"`
}

// ExactKeys are the plan part's keys, exact.
func (rp *RunPlan) ExactKeys() []string {
	out := append([]string(nil), rp.Keys...)
	for i, b := range rp.KeysBase64 {
		if k, err := base64.StdEncoding.DecodeString(b); err == nil && i < len(out) {
			out[i] = string(k)
		}
	}
	return out
}
