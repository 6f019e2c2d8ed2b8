package cli

import (
	"errors"
	"fmt"
)

// Exit codes, documented in the README. Scripts rely on them: never reuse one.
const (
	exitOK             = 0
	exitError          = 1  // Redis unreachable, server error, I/O error
	exitUsage          = 2  // bad flags, bad config, unknown preset or profile
	exitIncomplete     = 3  // the scan did not cover the whole keyspace (node lost, error mid-scan)
	exitRefused        = 4  // a write was refused: read-only profile, non-loopback seed, ACL
	exitConflict       = 5  // compare-and-set found the record changed
	exitNotFound       = 6  // the record to act on does not exist
	exitPartial        = 7  // a bulk action applied to some records only
	exitThreshold      = 8  // a check threshold was crossed
	exitUnjudged       = 9  // check: the data cannot back a verdict (ages unknown, undecoded, empty pattern); doctor: a rule could not run
	exitDoctorWarning  = 10 // doctor: the worst finding is a warning
	exitDoctorCritical = 11 // doctor: the worst finding is critical
	exitInterrupt      = 130
)

// exitCodeTable is the README's "Exit codes" table, for idemctl(1) and the
// test that keeps the two in step.
var exitCodeTable = []struct {
	code    int
	meaning string
}{
	{exitOK, "success (also: a pattern that matched nothing — a note goes to stderr)"},
	{exitError, "error: Redis unreachable, authentication failed, server error"},
	{exitUsage, "usage: bad flag, argument or environment variable, bad config (the message names the line), unknown preset/profile/keyspace, a write missing what its schema needs (--reason, --ttl, --ref)"},
	{exitIncomplete, "incomplete scan: the connection failed mid-scan; what was read is printed, the message says how far it got"},
	{exitRefused, "refused: writes disabled, not confirmed, ACL (NOPERM), a protected profile's name not given, an action the schema cannot express, `seed` against a non-loopback server, `exporter` on a non-loopback address"},
	{exitConflict, "conflict: the record changed since it was shown; nothing written"},
	{exitNotFound, "not found: the key no longer exists"},
	{exitPartial, "partial: a bulk write applied to some keys only (or was interrupted)"},
	{exitThreshold, "`check`: a threshold was crossed"},
	{exitUnjudged, "`check`: cannot judge — the data cannot back a verdict (processing records whose age cannot be derived, a keyspace whose records mostly do not decode, a pattern matching nothing while the database holds other keys); the line names the cause and the fix; `doctor`: a rule could not run (ACL, server version) and nothing worse was found"},
	{exitDoctorWarning, "`doctor`: the worst finding is a warning"},
	{exitDoctorCritical, "`doctor`: the worst finding is critical"},
	{exitInterrupt, "interrupted (Ctrl-C)"},
}

// exitErr carries an exit code with a one-line message.
type exitErr struct {
	code int
	msg  string // "" when the command has already said it on stdout
}

func (e *exitErr) Error() string { return e.msg }

func usageErr(format string, a ...any) error {
	return &exitErr{code: exitUsage, msg: fmt.Sprintf(format, a...)}
}

func codeErr(code int, format string, a ...any) error {
	return &exitErr{code: code, msg: fmt.Sprintf(format, a...)}
}

func exitCode(err error) int {
	var e *exitErr
	if errors.As(err, &e) {
		return e.code
	}
	return exitError
}
