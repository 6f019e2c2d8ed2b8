package actions

import (
	"errors"

	"github.com/redis/go-redis/v9"

	"github.com/idemctl/idemctl/actions/audit"
)

// Setup is everything a session's writes need. The CLI and the TUI fill one
// and get their executor from it, so policy, audit and identity are set up
// the same way for both.
type Setup struct {
	Client   redis.UniversalClient
	Policy   *Policy
	Identity audit.Identity // an empty RedisUser is recorded as "default"
	// AuditPath is the audit log file (DefaultAuditPath for the usual one).
	AuditPath string
	// AuditStream, when set, also receives every entry (XADD, best effort).
	AuditStream string
	// AuditValues says how much of each value the log keeps (zero: the
	// defaults, no payloads).
	AuditValues audit.Values
	// Durability is what each batch of writes waits for (zero: the
	// primary's replica, when it has one, for 2s).
	Durability Durability
	// Origin names the host and program for a new audit chain's genesis.
	Origin string
}

// NewExecutor opens the audit log (and its stream) and returns an executor
// ready to write under the policy. Close closes the log.
func NewExecutor(s Setup) (*Executor, error) {
	if s.AuditPath == "" {
		return nil, errors.New("audit log: no file given")
	}
	aud, err := audit.Open(s.AuditPath)
	if err != nil {
		return nil, err
	}
	if s.AuditStream != "" {
		aud.WithStream(s.Client, s.AuditStream)
	}
	ex := NewPlanner(s)
	aud.Values, aud.Identity, aud.Origin = s.AuditValues, ex.Identity, s.Origin
	ex.Audit, ex.opened = aud, aud
	return ex, nil
}

// NewPlanner returns an executor that plans but never writes, for a dry
// run or before the operator has confirmed: it opens nothing, and Apply
// refuses for want of an audit log. The same Setup later gives the
// executor that writes; plans carry over, and so does a protected
// profile's confirmation (the Policy is shared).
func NewPlanner(s Setup) *Executor {
	id := s.Identity
	if id.RedisUser == "" {
		id.RedisUser = "default"
	}
	return &Executor{Client: s.Client, Policy: s.Policy, Identity: id, auditPath: s.AuditPath, values: s.AuditValues, Durability: s.Durability}
}

// Close closes the audit log NewExecutor opened (nothing else: the client
// is the caller's).
func (e *Executor) Close() error {
	if e == nil || e.opened == nil {
		return nil
	}
	return e.opened.Close()
}

// CanWrite reports whether this executor may write at all this session:
// writes are on and the audit log is open. A protected profile may still
// need its name typed first (Policy.NeedsProfileName). A nil executor is
// read-only.
func (e *Executor) CanWrite() bool {
	return e != nil && e.Policy != nil && e.Policy.Writes && e.Audit != nil
}
