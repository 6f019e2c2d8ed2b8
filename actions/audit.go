package actions

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/redis/go-redis/v9"

	"github.com/idemctl/idemctl/internal/xdg"
)

// Identity is who writes, where, recorded with every audit entry.
type Identity struct {
	OSUser    string `json:"os_user"`
	RedisUser string `json:"redis_user"`
	Profile   string `json:"profile"`
	Address   string `json:"address"` // redacted: never holds a password
}

// AuditEntry is one line of the audit log: an intent before a write, an
// outcome after it, sharing an id.
type AuditEntry struct {
	Time string `json:"time"`
	ID   string `json:"id"`
	// Phase is "intent" (written and fsynced before the script runs) or "outcome".
	Phase string `json:"phase"`
	Identity
	Keyspace  string    `json:"keyspace"`
	Key       string    `json:"key"`
	KeyBase64 string    `json:"key_base64,omitempty"`
	Action    Kind      `json:"action"`
	Reason    string    `json:"reason"`
	Before    *Snapshot `json:"before,omitempty"`
	After     *Snapshot `json:"after,omitempty"` // planned (intent) or observed by a re-read (outcome)
	Changes   []Change  `json:"changes,omitempty"`
	Outcome   Outcome   `json:"outcome,omitempty"`
	Detail    string    `json:"detail,omitempty"`
	ServerMs  int64     `json:"server_ms,omitempty"`
}

// Auditor appends entries to a file (fsynced) and optionally to a Redis stream.
type Auditor struct {
	mu     sync.Mutex
	f      *os.File
	path   string
	stream string
	client redis.UniversalClient
	// streamErr is the last failure to mirror into the stream: the mirror
	// is best effort, the fsynced file is the record.
	streamErr error
}

// StreamError returns the last stream mirroring failure, if any.
func (a *Auditor) StreamError() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.streamErr
}

// DefaultAuditPath is $XDG_STATE_HOME/idemctl/audit.log (or ~/.local/state/…);
// getenv is the caller's view of the environment.
func DefaultAuditPath(getenv func(string) string) string {
	if p := xdg.Path(getenv, "XDG_STATE_HOME", filepath.Join(".local", "state"), "audit.log"); p != "" {
		return p
	}
	return "idemctl-audit.log" // no HOME: the working directory
}

// OpenAudit opens (creating, mode 0600) the audit log for appending.
func OpenAudit(path string) (*Auditor, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("audit log: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("audit log: %w", err)
	}
	return &Auditor{f: f, path: path}, nil
}

// WithStream also XADDs every entry to a Redis stream.
func (a *Auditor) WithStream(c redis.UniversalClient, stream string) *Auditor {
	a.stream, a.client = stream, c
	return a
}

// Path is the audit log's file.
func (a *Auditor) Path() string { return a.path }

// Close closes the file.
func (a *Auditor) Close() error { return a.f.Close() }

// Write appends one entry and fsyncs it. A write whose intent cannot be
// recorded must not run, so callers treat an error as a refusal.
func (a *Auditor) Write(ctx context.Context, e AuditEntry) error {
	if e.Time == "" {
		e.Time = time.Now().UTC().Format(time.RFC3339Nano)
	}
	if !utf8.ValidString(e.Key) {
		e.KeyBase64 = base64.StdEncoding.EncodeToString([]byte(e.Key))
	}
	line, err := json.Marshal(e)
	if err != nil {
		return err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if _, err := a.f.Write(append(line, '\n')); err != nil {
		return fmt.Errorf("audit log %s: %w", a.path, err)
	}
	if err := a.f.Sync(); err != nil {
		return fmt.Errorf("audit log %s: fsync: %w", a.path, err)
	}
	if a.stream != "" && a.client != nil {
		xctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
		defer cancel()
		a.streamErr = a.client.XAdd(xctx, &redis.XAddArgs{Stream: a.stream, MaxLen: 100000, Approx: true,
			Values: []any{"entry", string(line)}}).Err()
	}
	return nil
}

func newID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
