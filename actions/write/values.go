package write

import "encoding/base64"

// Image is a record's exact before-image, as an undo restores it: the
// server's own serialization (DUMP: every field, also those never shown,
// byte for byte, with the type, encoding and hash-field TTLs) and its
// expiry, pinned to the version the write's compare-and-set checked. An
// absent key has an image too (Exists false): undoing a write that
// created nothing but a later undo restored means deleting it again.
type Image struct {
	Exists bool `json:"exists"`
	// Dump is the DUMP payload, base64 (it is binary).
	Dump string `json:"dump_base64,omitempty"`
	// Len is the DUMP payload's length in bytes (without one: the
	// values' size, -1 for a type never imaged).
	Len int64 `json:"len"`
	// ExpireAtMs is the absolute expiry (server clock, epoch ms), 0 none.
	// An undo restores this, not the remaining TTL: the record ends when
	// its application said it would, however late the undo comes.
	ExpireAtMs int64 `json:"expire_at_ms"`
	// TTLms is what remained of the TTL when it was read (-1 none).
	TTLms int64 `json:"ttl_ms"`
	// NowMs is the server clock when it was read.
	NowMs int64 `json:"now_ms"`
	// Version is the record's version when it was read: the write the
	// image belongs to compared-and-set on exactly this.
	Version Version `json:"version"`
}

// Payload decodes the DUMP payload.
func (im *Image) Payload() ([]byte, error) {
	return base64.StdEncoding.DecodeString(im.Dump)
}

// Replication is what the primary said about one write's copies. Its
// fields sit flat in a result and an audit outcome line.
type Replication struct {
	Wanted int `json:"replicas_wanted"` // replicas asked for (0: no wait)
	Acked  int `json:"replicas_acked"`
	// Fsynced (WAITAOF) counts the fsyncs: the primary's own (0 or 1)
	// and the replicas'.
	Fsynced *Fsynced `json:"fsynced,omitempty"`
	// NotReplicated: fewer than Wanted acknowledged (or fsynced) in
	// time, so a failover now could take the write back.
	NotReplicated bool   `json:"not_replicated,omitempty"`
	Note          string `json:"replication_note,omitempty"`
}

// Fsynced is a WAITAOF reply.
type Fsynced struct {
	Local    int `json:"local"`
	Replicas int `json:"replicas"`
}

// ValueDigest stands for a value the audit log leaves out.
type ValueDigest struct {
	Len    int64  `json:"len"`
	SHA256 string `json:"sha256,omitempty"` // "" when the value was never read whole (the read cap)
	Why    string `json:"why"`
}

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
