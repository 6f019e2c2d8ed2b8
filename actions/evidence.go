package actions

// Evidence is what a verify hook found in the authoritative system before
// a write it led to (triage, the reaper): recorded in the write's audit
// entries, so the log says why each record was reconciled or failed.
type Evidence struct {
	Verdict string `json:"verdict"`          // done, not_done
	Ref     string `json:"ref,omitempty"`    // the authoritative system's reference
	Detail  string `json:"detail,omitempty"` // the hook's own words, sanitized
	Hook    string `json:"hook,omitempty"`   // the executable that judged
	TookMs  int64  `json:"took_ms"`
}
