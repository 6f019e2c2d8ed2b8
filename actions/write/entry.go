package write

import (
	"encoding/base64"
	"encoding/json"
	"unicode/utf8"
)

// RetryMode says how a retry hands the entry back.
type RetryMode string

const (
	// RetryClaim (the default) claims the entry for the recovery consumer
	// (XCLAIM … 0 id): its delivery count goes up by one, so an entry the
	// operator retries again and again still reaches the application's
	// max-deliveries limit. The recovery consumer reads it from its own
	// pending list (XREADGROUP … 0).
	RetryClaim RetryMode = "claim"
	// RetryClaimJustID claims it with JUSTID: the delivery count stays as
	// it was (for a recovery loop that counts its own attempts).
	RetryClaimJustID RetryMode = "claim-justid"
	// RetryRedeliver leaves it with its consumer and resets its idle time
	// to 0 (XCLAIM to the same consumer, IDLE 0 JUSTID): that consumer's
	// own pending-list loop retries it, and no other consumer's
	// XAUTOCLAIM takes it meanwhile.
	RetryRedeliver RetryMode = "redeliver"
)

// EntryAudit is a pending-entry write as the audit log holds it: in an
// intent, the entry as read; in an outcome, also what the write left.
type EntryAudit struct {
	Stream Name   `json:"stream"`
	Group  Name   `json:"group"`
	ID     string `json:"id"`
	// Consumer and Deliveries: the entry as the plan read it.
	Consumer   Name  `json:"consumer"`
	Deliveries int64 `json:"deliveries"`
	IdleMs     int64 `json:"idle_ms"`
	// DeliveredAtMs is when it was last delivered (the server's clock
	// minus its idle time): what an undo of a retry restores.
	DeliveredAtMs int64     `json:"delivered_at_ms"`
	Mode          RetryMode `json:"mode,omitempty"`
	To            Name      `json:"to,omitempty"` // a retry: the consumer it goes to
	DeadLetter    Name      `json:"dead_letter,omitempty"`
	// Fields, Bytes and FieldsSHA1 describe the entry's content (never
	// logged itself: it may hold personal data); Trimmed: it is no longer
	// in the stream, only in the pending list.
	Fields     int    `json:"fields"`
	Bytes      int64  `json:"bytes"`
	FieldsSHA1 string `json:"fields_sha1,omitempty"`
	Trimmed    bool   `json:"trimmed,omitempty"`
	// Left (an applied outcome) is the entry as the write left it: nil
	// when it is no longer pending (acked, dead-lettered).
	Left *EntrySeenAudit `json:"left,omitempty"`
	// DeadLetterID (an applied dead-letter) is the copy's id.
	DeadLetterID string `json:"dead_letter_id,omitempty"`
}

// EntrySeenAudit is EntrySeen with the consumer's exact bytes.
type EntrySeenAudit struct {
	Consumer   Name  `json:"consumer"`
	Deliveries int64 `json:"deliveries"`
}

// Name is a stream, group or consumer name as the audit log keeps it: a
// JSON string when it is UTF-8, else {"base64": …}, so an undo gets its
// exact bytes back.
type Name string

func (n Name) MarshalJSON() ([]byte, error) {
	if utf8.ValidString(string(n)) {
		return json.Marshal(string(n))
	}
	return json.Marshal(map[string]string{"base64": base64.StdEncoding.EncodeToString([]byte(n))})
}

func (n *Name) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		*n = Name(s)
		return nil
	}
	var m struct {
		B64 string `json:"base64"`
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	raw, err := base64.StdEncoding.DecodeString(m.B64)
	*n = Name(raw)
	return err
}
