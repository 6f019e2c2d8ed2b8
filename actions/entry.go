package actions

import (
	"encoding/base64"
	"encoding/json"
	"unicode/utf8"
)

// Pending-entry actions: a message a consumer group delivered to a consumer
// that never acknowledged it sits in the group's pending entries list
// (PEL), idle, like a stuck processing record. These Kinds repair one
// entry through the same executor as the record writes: planned from what
// the operator saw, compared-and-set in one script, waited for, audited.
const (
	// KindRetry hands the entry to be processed again (RetryMode).
	KindRetry Kind = "retry"
	// KindAck acknowledges it (XACK): its side effect is known to have
	// happened. Not undoable.
	KindAck Kind = "ack"
	// KindDeadLetter copies it, with where it came from, to a dead-letter
	// stream and acknowledges it, in one script. Not undoable.
	KindDeadLetter Kind = "dead-letter"
)

// ParseEntryKind maps a name to a pending-entry Kind.
func ParseEntryKind(s string) (Kind, error) {
	return parseKindOf(s, "pending-entry action", KindRetry, KindAck, KindDeadLetter)
}

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

// EntrySeen is a pending entry as the operator saw it: the consumer it is
// pending to and its delivery count. Idle time is not part of it: it
// moves by itself.
type EntrySeen struct {
	Consumer   string `json:"consumer"`
	Deliveries int64  `json:"deliveries"`
}

// EntryRequest is one write on a pending entry.
type EntryRequest struct {
	Kind              Kind // KindRetry, KindAck or KindDeadLetter
	Stream, Group, ID string
	// Saw is what the operator saw; nil: what PlanEntry reads now.
	Saw *EntrySeen
	// Mode is a retry's (RetryClaim when "").
	Mode RetryMode
	// RecoveryConsumer is the consumer a claiming retry hands it to.
	RecoveryConsumer string
	// DeadLetter is the stream a dead-letter copies it to; in a cluster
	// it must share the stream's slot (a hash tag: "{orders}:dlq").
	DeadLetter string
	Reason, By string
	// Evidence, when a verify hook's verdict led to this write (an ack:
	// the side effect happened), is recorded with it in the audit log.
	Evidence *Evidence
}

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

// EntryTarget names a pending-entry plan's entry, for the faces (a
// record plan has none).
type EntryTarget struct {
	Stream string `json:"stream"`
	Group  string `json:"group"`
	ID     string `json:"id"`
}

// Entry is the pending entry p writes (nil for a record write).
func (p *Plan) Entry() *EntryTarget {
	if p.entry == nil {
		return nil
	}
	r := p.entry.req
	return &EntryTarget{Stream: r.Stream, Group: r.Group, ID: r.ID}
}
