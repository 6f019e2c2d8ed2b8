package cli

import (
	"errors"
	"fmt"
)

// Exit codes, documented in the README. Scripts rely on them: never reuse one.
const (
	exitOK         = 0
	exitError      = 1 // Redis unreachable, server error, I/O error
	exitUsage      = 2 // bad flags, bad config, unknown preset or profile
	exitIncomplete = 3 // the scan did not cover the whole keyspace (node lost, error mid-scan)
	exitRefused    = 4 // a write was refused: read-only profile, non-loopback seed, ACL
	exitConflict   = 5 // compare-and-set found the record changed
	exitNotFound   = 6 // the record to act on does not exist
	exitPartial    = 7 // a bulk action applied to some records only
	exitThreshold  = 8 // a check threshold was crossed
	exitInterrupt  = 130
)

// exitErr carries an exit code with a one-line message.
type exitErr struct {
	code int
	msg  string
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
