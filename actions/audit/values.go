package audit

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"
	"strings"

	"github.com/idemctl/idemctl/actions/write"
	"github.com/idemctl/idemctl/inspect"
)

// Values says how much of a record's values the audit log keeps. A
// value left out is recorded by its length and SHA-256, and the intent is
// marked not undoable with the reason: an undo needs exact before-images.
type Values struct {
	// MaxValue: a value longer than this many bytes is left out (0:
	// DefaultMaxValue).
	MaxValue int
	// Payloads keeps response bodies and stored failures (the schema's
	// response and failure fields) up to MaxValue; off, they are left out,
	// since they may hold personal data.
	Payloads bool
}

// DefaultMaxValue is the longest value the audit log keeps by default.
const DefaultMaxValue = 1 << 10

// DefaultValues keeps short values and no payloads.
func DefaultValues() Values { return Values{MaxValue: DefaultMaxValue} }

// WhyPayload is why a payload is left out.
const WhyPayload = "payload (audit_payloads is off)"

func (v Values) limit() int {
	if v.MaxValue <= 0 {
		return DefaultMaxValue
	}
	return v.MaxValue
}

// omit says why a value stays out of the log ("" keeps it).
func (v Values) omit(payload bool, val string) string {
	switch {
	case payload && !v.Payloads && val != "":
		return WhyPayload
	case len(val) > v.limit():
		return fmt.Sprintf("longer than %d bytes", v.limit())
	}
	return ""
}

// Digest stands for val in the log: its length and SHA-256, and why.
func Digest(val, why string) write.ValueDigest {
	sum := sha256.Sum256([]byte(val))
	return write.ValueDigest{Len: int64(len(val)), SHA256: hex.EncodeToString(sum[:]), Why: why}
}

// payloadFields says which of a keyspace's field names hold payloads: the
// schema's response and failure fields (dot paths below them too), and the
// whole value of a JSON document that could not be split into fields.
func payloadFields(ks *inspect.Keyspace) func(string) bool {
	if ks == nil {
		return func(string) bool { return false }
	}
	s := ks.Schema
	var names []string
	for _, n := range []string{s.Response, s.Failure} {
		if n != "" {
			names = append(names, n)
		}
	}
	return func(name string) bool {
		if name == "value" && s.Codec == inspect.CodecJSON && len(names) > 0 {
			return true
		}
		for _, n := range names {
			if name == n || strings.HasPrefix(name, n+".") {
				return true
			}
		}
		return false
	}
}

// snapshot is the copy of s the log keeps, and what it left out.
func (v Values) snapshot(s *write.Snapshot, payload func(string) bool) (*write.Snapshot, []string) {
	if s == nil {
		return nil, nil
	}
	c := *s
	c.Fields = make(map[string]string, len(s.Fields))
	c.Omitted = make(map[string]write.ValueDigest, len(s.Omitted))
	for k, d := range s.Omitted {
		c.Omitted[k] = d
	}
	for k, val := range s.Fields {
		if _, cut := s.Omitted[k]; cut {
			continue // a placeholder for a value never read whole
		}
		if why := v.omit(payload(k), val); why != "" {
			c.Omitted[k] = Digest(val, why)
			continue
		}
		c.Fields[k] = val
	}
	for name, p := range map[string]*string{"(state)": &c.State, "(fingerprint)": &c.Fingerprint} {
		if why := v.omit(false, *p); why != "" {
			c.Omitted[name] = Digest(*p, why)
			*p = ""
		}
	}
	if len(c.Omitted) == 0 {
		c.Omitted = nil
	}
	var notes []string
	for k, d := range c.Omitted {
		notes = append(notes, fmt.Sprintf("%s (%d bytes): %s", k, d.Len, d.Why))
	}
	sort.Strings(notes)
	return &c, notes
}

// changes is the copy of a diff the log keeps: a value it leaves out is
// shown by length and digest.
func (v Values) changes(cs []write.Change, payload func(string) bool) []write.Change {
	out := make([]write.Change, len(cs))
	for i, c := range cs {
		pay := payload(c.Field)
		for _, p := range []*string{&c.Before, &c.After} {
			if *p == "(none)" {
				continue // orNone's placeholder, not a value
			}
			if why := v.omit(pay, *p); why != "" {
				d := Digest(*p, why)
				*p = fmt.Sprintf("‹%d bytes, sha256 %s›", d.Len, d.SHA256[:16])
			}
		}
		out[i] = c
	}
	return out
}

// Left lists what the log would leave out of s, a record of ks.
func (v Values) Left(s *write.Snapshot, ks *inspect.Keyspace) []string {
	_, notes := v.snapshot(s, payloadFields(ks))
	return notes
}

// Apply bounds an entry's snapshots and diff.
func (v Values) Apply(e *Entry, ks *inspect.Keyspace) {
	payload := payloadFields(ks)
	e.Before, _ = v.snapshot(e.Before, payload)
	e.After, _ = v.snapshot(e.After, payload)
	e.Changes = v.changes(e.Changes, payload)
}
