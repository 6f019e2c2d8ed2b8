package inspect

import (
	"fmt"
	"time"

	"github.com/idemctl/idemctl/inspect/keytemplate"
)

// Default limits.
const (
	DefaultLargeResponse = 16 << 10 // bytes
	DefaultMaxValue      = 64 << 10 // read cap for any single value
)

// Keyspace is one pattern of idempotency keys with its schema and timing
// policy.
type Keyspace struct {
	Name              string
	Match             string
	Schema            *Schema
	Template          *keytemplate.Template
	ProcessingTimeout time.Duration
	ReserveTTL        time.Duration // TTL the reserve step sets; for age from TTL
	Retention         time.Duration // TTL the complete step sets
	LargeResponse     int64
	MaxValue          int64
}

// KeyspaceSpec is the uncompiled form of a keyspace, from config or flags.
// Zero values take the schema's defaults.
type KeyspaceSpec struct {
	Name              string
	Match             string
	Schema            *Schema
	KeyTemplate       string
	ProcessingTimeout time.Duration
	ReserveTTL        time.Duration
	Retention         time.Duration
	LargeResponse     int64
	MaxValue          int64
}

// NewKeyspace fills unset settings from the schema's defaults and checks them.
func NewKeyspace(sp KeyspaceSpec) (*Keyspace, error) {
	if sp.Schema == nil {
		return nil, fmt.Errorf("keyspace %s: no schema (set a preset or a schema)", sp.Name)
	}
	d := sp.Schema.Defaults
	ks := &Keyspace{
		Name:              sp.Name,
		Match:             first(sp.Match, d.Match),
		Schema:            sp.Schema,
		ProcessingTimeout: firstD(sp.ProcessingTimeout, d.ProcessingTimeout.D()),
		ReserveTTL:        firstD(sp.ReserveTTL, d.ReserveTTL.D()),
		Retention:         firstD(sp.Retention, d.Retention.D()),
		LargeResponse:     sp.LargeResponse,
		MaxValue:          sp.MaxValue,
	}
	if ks.Match == "" {
		return nil, fmt.Errorf("keyspace %s: no match pattern (schema %s has no default)", sp.Name, sp.Schema.Name)
	}
	if ks.Name == "" {
		ks.Name = sp.Schema.Name
	}
	tpl := sp.KeyTemplate
	if tpl == "" {
		tpl = d.KeyTemplate
	}
	t, err := keytemplate.Parse(tpl)
	if err != nil {
		return nil, fmt.Errorf("keyspace %s: %v", ks.Name, err)
	}
	ks.Template = t
	if ks.LargeResponse <= 0 {
		ks.LargeResponse = DefaultLargeResponse
	}
	if ks.MaxValue <= 0 {
		ks.MaxValue = DefaultMaxValue
	}
	if ks.MaxValue < 256 {
		return nil, fmt.Errorf("keyspace %s: max value %d is below 256 bytes", ks.Name, ks.MaxValue)
	}
	return ks, nil
}

func first(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func firstD(a, b time.Duration) time.Duration {
	if a > 0 {
		return a
	}
	return b
}
