package cli

import (
	"errors"
	"fmt"

	"github.com/idemctl/idemctl/cli/docgen"
	"github.com/idemctl/idemctl/internal/redisconn"
)

// Exit codes, documented in the README. Scripts rely on them: never reuse one.
// Exported for the acceptance suites, which check them from outside.
const (
	ExitOK             = 0
	ExitError          = 1  // Redis unreachable, server error, I/O error
	ExitUsage          = 2  // bad flags, bad config, unknown preset or profile
	ExitIncomplete     = 3  // the scan did not cover the whole keyspace (node lost, error mid-scan)
	ExitRefused        = 4  // a write was refused: read-only profile, non-loopback seed, ACL
	ExitConflict       = 5  // compare-and-set found the record changed
	ExitNotFound       = 6  // the record to act on does not exist
	ExitPartial        = 7  // a bulk action applied to some records only
	ExitThreshold      = 8  // a check threshold was crossed; reap: a circuit breaker tripped
	ExitUnjudged       = 9  // check: the data cannot back a verdict (ages unknown, undecoded, empty pattern); doctor: a rule could not run; triage: no record had a verdict to act on
	ExitDoctorWarning  = 10 // doctor: the worst finding is a warning
	ExitDoctorCritical = 11 // doctor: the worst finding is critical
	ExitAudit          = 12 // the audit log could not be written: the run stopped before its next write
	ExitSnapshot       = 13 // --rdb: the snapshot file is not one, is newer than idemctl knows, or is damaged
	ExitNotReplicated  = 14 // applied on the primary, but not acknowledged by the replicas waited for
	ExitTampered       = 15 // audit verify: the audit log's hash chain is broken
	ExitInterrupt      = 130
)

// ExitCodeTable is the one list of exit codes: the README's "Exit codes"
// table (Meaning), idemctl(1)'s EXIT STATUS (Meaning) and the end of
// 'idemctl --help' (Short); TestExitCodesAgreeEverywhere keeps the three
// in step.
var ExitCodeTable = []docgen.ExitCode{
	{Code: ExitOK, Short: "ok", Meaning: "success (also: a pattern that matched nothing — a note goes to stderr)"},
	{Code: ExitError, Short: "error", Meaning: "error: Redis unreachable, authentication failed, server error"},
	{Code: ExitUsage, Short: "usage or config", Meaning: "usage: bad flag, argument or environment variable, bad config (the message names the line), unknown preset/profile/keyspace, a write missing what its schema needs (--reason, --ttl, --ref)"},
	{Code: ExitIncomplete, Short: "incomplete scan", Meaning: "incomplete scan: the connection failed mid-scan; what was read is printed, the message says how far it got"},
	{Code: ExitRefused, Short: "refused", Meaning: "refused: writes disabled, not confirmed, ACL (NOPERM), a protected profile's name not given, an action the schema cannot express, `seed` against a non-loopback server, `exporter` on a non-loopback address, `undo` of a write the log holds no before-image for (or already reverted)"},
	{Code: ExitConflict, Short: "conflict", Meaning: "conflict: the record changed since it was shown (`undo`: since the write left it); nothing written"},
	{Code: ExitNotFound, Short: "not found", Meaning: "not found: the key no longer exists (`audit show`: no such run; `undo`: no such write in the audit log; `find`: nothing is stored under the derived key)"},
	{Code: ExitPartial, Short: "partial", Meaning: "partial: a bulk write applied to some keys only (or was interrupted); `triage`: some records written, some left alone"},
	{Code: ExitThreshold, Short: "threshold crossed", Meaning: "`check`: a threshold was crossed; `reap`: a circuit breaker tripped (more records qualified than its threshold: none was acted on)"},
	{Code: ExitUnjudged, Short: "cannot judge", Meaning: "`check`: cannot judge — the data cannot back a verdict (processing records whose age cannot be derived, a keyspace whose records mostly do not decode, a pattern matching nothing while the database holds other keys); the line names the cause and the fix; `doctor`: a rule could not run (ACL, server version) and nothing worse was found; `triage`: no selected record had a verdict to act on (all left alone, each with why)"},
	{Code: ExitDoctorWarning, Short: "doctor warning", Meaning: "`doctor`: the worst finding is a warning"},
	{Code: ExitDoctorCritical, Short: "doctor critical", Meaning: "`doctor`: the worst finding is critical"},
	{Code: ExitAudit, Short: "audit log failure", Meaning: "audit log failure (disk full, I/O error): the run stopped before its next write; every write made has its intent in the log; free space and run the same command again"},
	{Code: ExitSnapshot, Short: "snapshot unreadable", Meaning: "`--rdb`: the snapshot cannot be opened (no such file, not readable, a directory) or read to its end — not an RDB file, an RDB version newer than idemctl knows, truncated, a checksum mismatch, corrupt data; the message names the file and, for a damaged one, the byte offset and what was expected; `scan` and `stats` print what was read before the fault, marked partial"},
	{Code: ExitNotReplicated, Short: "applied but not replicated", Meaning: "applied, not replicated: every write was applied on the primary, but fewer replicas than `--min-replicas` acknowledged some within `--replica-timeout` (or `--require-fsync` was not met): a failover now could take them back; the report marks each, and `audit check-applied` finds any a failover took"},
	{Code: ExitTampered, Short: "audit log tampered", Meaning: "`audit verify`: the audit log's hash chain is broken — a line was edited, removed, moved or inserted (the message names the line and byte offset), or the entry a `--head` names is not the one printed"},
	{Code: ExitInterrupt, Short: "interrupted", Meaning: "interrupted (Ctrl-C or SIGTERM; a command blocked where it cannot stop, such as on a stdin that stays open, is ended 3 s after the signal)"},
}

// exitErr carries an exit code with a one-line message, and the error it
// was caused by when the message wraps one (%w): errors.Is and errors.As
// see through it.
type exitErr struct {
	code  int
	msg   string // "" when the command has already said it on stdout
	cause error  // the format's %w, or nil
}

func (e *exitErr) Error() string { return e.msg }

func (e *exitErr) Unwrap() error { return e.cause }

func usageErr(format string, a ...any) error { return codeErr(ExitUsage, format, a...) }

// codeErr is an exitErr of code whose message is format; a %w in it wraps
// its error as fmt.Errorf does.
func codeErr(code int, format string, a ...any) error {
	err := fmt.Errorf(format, a...)
	e := &exitErr{code: code, msg: err.Error()}
	switch err.(type) {
	case interface{ Unwrap() error }, interface{ Unwrap() []error }:
		e.cause = err
	}
	return e
}

func exitCode(err error) int {
	var e *exitErr
	if errors.As(err, &e) {
		return e.code
	}
	var ce *redisconn.Error
	if errors.As(err, &ce) && ce.Kind == redisconn.KindInput {
		return ExitUsage
	}
	return ExitError
}
