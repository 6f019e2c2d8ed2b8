// Package audit is the write path's audit log: an append-only file of
// JSON lines, each write's intent made durable (fsynced, under a file
// lock) before it runs and its outcome after, chained by SHA-256 so an
// edit, a removal or a reordering is found (Verify); a torn tail left by
// a crash or a full disk is repaired, never continued; and how much of a
// record's values an entry keeps (Values).
//
// Floor 2 of ARCHITECTURE.md, the write path, below actions: it may import
// actions/write, the read engine and the foundations.
package audit

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/redis/go-redis/v9"

	"github.com/idemctl/idemctl/actions/write"
	"github.com/idemctl/idemctl/internal/xdg"
)

// Identity is who writes, where, recorded with every audit entry.
type Identity struct {
	OSUser    string `json:"os_user"`
	RedisUser string `json:"redis_user"`
	Profile   string `json:"profile"`
	Address   string `json:"address"` // redacted: never holds a password
	// Actor names an unattended writer ("reaper/<policy>"); "" for a person.
	Actor string `json:"actor,omitempty"`
}

// Audit phases. A run writes its plan, then for each write an intent
// (durable before the script runs) and an outcome sharing the intent's id.
const (
	PhasePlan    = "plan"
	PhaseIntent  = "intent"
	PhaseOutcome = "outcome"
	PhaseRepair  = "repair" // marks a torn line left by an earlier crash or full disk
)

// Entry is one line of the audit log.
type Entry struct {
	// Seq and Prev chain the log (see PhaseGenesis): the entry's place,
	// and the SHA-256 of the line before it.
	Seq  *uint64 `json:"seq,omitempty"`
	Prev string  `json:"prev,omitempty"`
	Time string  `json:"time"`
	ID   string  `json:"id"`
	// Phase is one of the Phase constants.
	Phase string `json:"phase"`
	// Run names the run (ApplyAll) the entry belongs to; re-running the
	// same input gives the same id.
	Run string `json:"run,omitempty"`
	Identity
	Keyspace  string          `json:"keyspace"`
	Key       string          `json:"key"`
	KeyBase64 string          `json:"key_base64,omitempty"`
	Action    write.Kind      `json:"action"`
	Reason    string          `json:"reason"`
	Before    *write.Snapshot `json:"before,omitempty"`
	After     *write.Snapshot `json:"after,omitempty"` // planned (intent)
	Changes   []write.Change  `json:"changes,omitempty"`
	Evidence  *write.Evidence `json:"evidence,omitempty"` // a verify hook's verdict behind the write
	// Entry is a pending-entry write's entry (Key is then its stream).
	Entry *write.EntryAudit `json:"entry,omitempty"`
	// Undoable says whether the intent holds an exact before-image
	// (Image): false when a value was left out of the log (too long, a
	// payload, cut by the read cap) or the image is over MaxImage, with
	// UndoNote saying which and why.
	Undoable *bool  `json:"undoable,omitempty"`
	UndoNote string `json:"undo_note,omitempty"`
	// Image is an undoable intent's exact before-image (see Image).
	Image *write.Image `json:"image,omitempty"`
	// AfterVersion (an applied outcome) is the version the write left:
	// an undo restores only a record still exactly this.
	AfterVersion *write.Version `json:"after_version,omitempty"`
	// Reverts (an undo) is the intent id of the write it reverts.
	Reverts  string        `json:"reverts,omitempty"`
	Outcome  write.Outcome `json:"outcome,omitempty"`
	Detail   string        `json:"detail,omitempty"`
	ServerMs int64         `json:"server_ms,omitempty"`
	// Replication (an applied outcome): the replicas that acknowledged
	// it and the fsyncs, or why they were not waited for.
	*write.Replication
	// Plan entries: the run's targets, in parts of at most planPartKeys.
	*RunPlan
	// Repair entries: the torn lines this one marks.
	Torn []TornLine `json:"torn,omitempty"`
	// Origin (a genesis entry) names the host and the idemctl that began
	// the chain.
	Origin string `json:"origin,omitempty"`
}

// ExactKey is the entry's key, exact even when it is not UTF-8.
func (e *Entry) ExactKey() string {
	if e.KeyBase64 != "" {
		if b, err := base64.StdEncoding.DecodeString(e.KeyBase64); err == nil {
			return string(b)
		}
	}
	return e.Key
}

// TornLine is a line an interrupted write left unfinished: where it starts
// (byte offset), how long it is, and its digest. It stays in the log as
// it was, terminated, and a repair entry names it.
type TornLine struct {
	Offset int64  `json:"offset"`
	Len    int64  `json:"len"`
	SHA256 string `json:"sha256"`
}

// MaxLine bounds one audit line as written: values beyond the
// Values cap are recorded by length and digest, so only a huge key
// or reason can reach it, and such an entry is refused (and so is its
// write). The reader accepts far longer lines (maxReadLine).
const MaxLine = 1 << 20

// Auditor appends entries to a file (fsynced) and optionally to a Redis stream.
type Auditor struct {
	mu     sync.Mutex
	f      *os.File
	path   string
	stream string
	client redis.UniversalClient
	// Values says how much of each value the log keeps.
	Values Values
	// Identity signs repair entries.
	Identity Identity
	// streamErr is the last failure to mirror into the stream: the mirror
	// is best effort, the fsynced file is the record.
	streamErr error
	// checkTail: the file may end in a torn line (just opened, or a write
	// failed): the next append looks, and repairs it first.
	checkTail bool
	repaired  []TornLine
	// Origin is what a genesis entry says began the chain ("host H,
	// idemctl V").
	Origin string
	// head is the chain's head as this auditor last left it, valid while
	// the file is still headSize long (another process may append).
	head     chainHead
	headSize int64
}

// Head is the chain's head after this auditor's last append (SEQ:DIGEST,
// what `audit verify --head` takes); "" before any.
func (a *Auditor) Head() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.head.ok {
		return ""
	}
	return a.head.String()
}

func (a *Auditor) genesis() Entry {
	return Entry{ID: NewID(), Phase: PhaseGenesis, Identity: a.Identity, Origin: a.Origin,
		Detail: "the audit log's hash chain begins here: each entry carries its sequence number and the SHA-256 of the line before it"}
}

// currentHead is the chain's head now: this auditor's, unless the file
// grew since (another operator's idemctl appended), then read from it.
func (a *Auditor) currentHead() (chainHead, int64, error) {
	fi, err := a.f.Stat()
	if err != nil {
		return chainHead{}, 0, err
	}
	if a.head.ok && fi.Size() == a.headSize {
		return a.head, fi.Size(), nil
	}
	h, err := headBefore(a.f, fi.Size())
	return h, fi.Size(), err
}

// StreamError returns the last stream mirroring failure, if any.
func (a *Auditor) StreamError() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.streamErr
}

// Repaired lists the torn lines this auditor found and marked, to report.
func (a *Auditor) Repaired() []TornLine {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]TornLine(nil), a.repaired...)
}

// DefaultPath is $XDG_STATE_HOME/idemctl/audit.log (or ~/.local/state/…);
// getenv is the caller's view of the environment.
func DefaultPath(getenv func(string) string) string {
	if p := xdg.Path(getenv, "XDG_STATE_HOME", filepath.Join(".local", "state"), "audit.log"); p != "" {
		return p
	}
	return "idemctl-audit.log" // no HOME: the working directory
}

// Open opens (creating, mode 0600) the audit log for appending. Its
// tail is checked, and repaired if torn, before the first append.
func Open(path string) (*Auditor, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("audit log: %w", err)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("audit log: %w", err)
	}
	return &Auditor{f: f, path: path, checkTail: true, Values: DefaultValues()}, nil
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

// Failure is a failure to make entries durable: the run that met it
// stops before its next write.
type Failure struct {
	Path string
	Op   string // "write", "fsync", "repair", "entry"
	Err  error
}

func (e *Failure) Error() string {
	err := e.Err
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err // the path is said once
	}
	return fmt.Sprintf("audit log %s: %s: %v", e.Path, e.Op, err)
}

func (e *Failure) Unwrap() error { return e.Err }

// Write appends one entry and fsyncs it. A write whose intent cannot be
// recorded must not run, so callers treat an error as a refusal.
func (a *Auditor) Write(ctx context.Context, e Entry) error {
	return a.Append(ctx, e)
}

// Append writes entries with one write and one fsync (the group commit):
// all are durable when it returns nil. A torn tail left by an earlier
// failure is repaired first, so a new line never continues a torn one.
func (a *Auditor) Append(ctx context.Context, es ...Entry) error {
	if len(es) == 0 {
		return nil
	}
	now := time.Now().UTC().Format(time.RFC3339Nano)
	a.mu.Lock()
	defer a.mu.Unlock()
	unlock, err := lockFile(a.f)
	if err != nil {
		return &Failure{Path: a.path, Op: "lock", Err: err}
	}
	defer unlock()
	if a.checkTail {
		torn, err := repairTail(a.f, a.Identity, a.genesis)
		if err != nil {
			return &Failure{Path: a.path, Op: "repairing a torn line", Err: err}
		}
		a.repaired = append(a.repaired, torn...)
		a.checkTail = false
	}
	// Under the lock, the chain continues from the file's last entry,
	// whoever wrote it.
	head, size, err := a.currentHead()
	if err != nil {
		return &Failure{Path: a.path, Op: "reading the chain's head", Err: err}
	}
	lines, head, err := chain(head, a.genesis, es, now)
	if err != nil {
		return &Failure{Path: a.path, Op: "entry", Err: err}
	}
	var buf bytes.Buffer
	for _, l := range lines {
		buf.Write(l)
		buf.WriteByte('\n')
	}
	if _, err := a.f.Write(buf.Bytes()); err != nil {
		a.checkTail, a.head = true, chainHead{} // it may have left part of a line
		return &Failure{Path: a.path, Op: "write", Err: err}
	}
	if err := a.f.Sync(); err != nil {
		a.checkTail, a.head = true, chainHead{}
		return &Failure{Path: a.path, Op: "fsync", Err: err}
	}
	a.head, a.headSize = head, size+int64(buf.Len())
	if a.stream != "" && a.client != nil {
		a.mirror(ctx, buf.Bytes())
	}
	return nil
}

// mirror XADDs the lines just written, in one pipeline.
func (a *Auditor) mirror(ctx context.Context, lines []byte) {
	xctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
	defer cancel()
	pipe := a.client.Pipeline()
	for _, l := range bytes.Split(bytes.TrimSuffix(lines, []byte{'\n'}), []byte{'\n'}) {
		pipe.XAdd(xctx, &redis.XAddArgs{Stream: a.stream, MaxLen: 100000, Approx: true, Values: []any{"entry", string(l)}})
	}
	_, a.streamErr = pipe.Exec(xctx)
}

// marshalEntry is one entry's line, without its newline.
func marshalEntry(e Entry, now string) ([]byte, error) {
	if e.Time == "" {
		e.Time = now
	}
	if !utf8.ValidString(e.Key) {
		e.KeyBase64 = base64.StdEncoding.EncodeToString([]byte(e.Key))
	}
	e.Reason, e.Detail = clipText(e.Reason), clipText(e.Detail)
	line, err := json.Marshal(e)
	if err != nil {
		return nil, err
	}
	if len(line) > MaxLine {
		return nil, fmt.Errorf("an entry of %d bytes exceeds the %d-byte line limit (key of %d bytes)", len(line), MaxLine, len(e.Key))
	}
	return line, nil
}

// maxText bounds a reason or detail in the log.
const maxText = 4 << 10

// clipText cuts s to maxText bytes on a rune boundary, saying how long it was.
func clipText(s string) string {
	if len(s) <= maxText {
		return s
	}
	cut := maxText
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + fmt.Sprintf("… (%d bytes in all)", len(s))
}

// NewID is a fresh entry id: 8 random bytes, in hex.
func NewID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
