package streams

import (
	"strconv"
	"strings"
	"time"
)

// Space is a kind: stream keyspace: the streams SCAN MATCH finds, the
// consumer groups read on them, and when a pending entry (a message
// delivered to a consumer and never acknowledged) is stale or poison.
type Space struct {
	Name              string
	Match             string
	Groups            []string      // only these groups; empty: all
	ProcessingTimeout time.Duration // idle longer than this: stale (the consumer probably crashed)
	MaxDeliveries     int64         // delivered more often than this: poison
	DeadLetter        string        // where the actions move poison entries; {stream} is the stream's key
	RecoveryConsumer  string        // the consumer retried entries are claimed to
}

// Stream keyspace defaults: a consumer that has held a message for five
// minutes without acknowledging it is as good as gone for most handlers
// (they take milliseconds to seconds); five deliveries is the usual
// "stop retrying" count of consumer libraries.
const (
	DefaultStreamTimeout    = 5 * time.Minute
	DefaultMaxDeliveries    = 5
	DefaultRecoveryConsumer = "idemctl-recovery"
)

// WithDefaults fills what is unset.
func (s Space) WithDefaults() Space {
	if s.ProcessingTimeout <= 0 {
		s.ProcessingTimeout = DefaultStreamTimeout
	}
	if s.MaxDeliveries <= 0 {
		s.MaxDeliveries = DefaultMaxDeliveries
	}
	if s.RecoveryConsumer == "" {
		s.RecoveryConsumer = DefaultRecoveryConsumer
	}
	if s.Name == "" {
		s.Name = s.Match
	}
	return s
}

// DeadLetterFor is the dead-letter stream of one stream ("" when none is set).
func (s Space) DeadLetterFor(stream string) string {
	return strings.ReplaceAll(s.DeadLetter, "{stream}", stream)
}

// wants reports whether group is one the space reads.
func (s Space) wants(group string) bool {
	if len(s.Groups) == 0 {
		return true
	}
	for _, g := range s.Groups {
		if g == group {
			return true
		}
	}
	return false
}

// flag marks an entry stale and poison by the space's thresholds.
func (s Space) flag(e *PendingEntry) {
	e.Stale = e.Idle.D() > s.ProcessingTimeout
	e.Poison = e.Deliveries > s.MaxDeliveries
}

// IDMillis is the millisecond part of a stream entry ID ("1700000000000-0"):
// when the entry was added, for IDs the server generated.
func IDMillis(id string) (int64, bool) {
	ms, _, _ := strings.Cut(id, "-")
	n, err := strconv.ParseInt(ms, 10, 64)
	return n, err == nil && n >= 0
}

// Millis is a duration that marshals to JSON as whole milliseconds.
type Millis time.Duration

// D is the duration.
func (m Millis) D() time.Duration { return time.Duration(m) }

// MarshalJSON implements json.Marshaler.
func (m Millis) MarshalJSON() ([]byte, error) {
	return strconv.AppendInt(nil, time.Duration(m).Milliseconds(), 10), nil
}
