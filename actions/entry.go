package actions

import "github.com/idemctl/idemctl/actions/write"

// ParseEntryKind maps a name to a pending-entry Kind.
func ParseEntryKind(s string) (write.Kind, error) {
	return parseKindOf(s, "pending-entry action", write.KindRetry, write.KindAck, write.KindDeadLetter)
}

// EntrySeen is a pending entry as the operator saw it: the consumer it is
// pending to and its delivery count. Idle time is not part of it: it
// moves by itself.
type EntrySeen struct {
	Consumer   string `json:"consumer"`
	Deliveries int64  `json:"deliveries"`
}

// EntryRequest is one write on a pending entry.
type EntryRequest struct {
	Kind              write.Kind // KindRetry, KindAck or KindDeadLetter
	Stream, Group, ID string
	// Saw is what the operator saw; nil: what PlanEntry reads now.
	Saw *EntrySeen
	// Mode is a retry's (RetryClaim when "").
	Mode write.RetryMode
	// RecoveryConsumer is the consumer a claiming retry hands it to.
	RecoveryConsumer string
	// DeadLetter is the stream a dead-letter copies it to; in a cluster
	// it must share the stream's slot (a hash tag: "{orders}:dlq").
	DeadLetter string
	Reason, By string
	// Evidence, when a verify hook's verdict led to this write (an ack:
	// the side effect happened), is recorded with it in the audit log.
	Evidence *write.Evidence
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
