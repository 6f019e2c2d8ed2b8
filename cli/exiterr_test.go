package cli

import (
	"errors"
	"io/fs"
	"testing"

	"github.com/idemctl/idemctl/actions"
)

// An exit error keeps its message's text and its code, and errors.Is and
// errors.As see through it to the cause its %w wraps.
func TestExitErrWrapsItsCause(t *testing.T) {
	err := codeErr(ExitRefused, "--apply: %w", actions.ErrReadOnly)
	if !errors.Is(err, actions.ErrReadOnly) {
		t.Errorf("errors.Is does not see the cause through %v", err)
	}
	if want := "--apply: " + actions.ErrReadOnly.Error(); err.Error() != want {
		t.Errorf("message %q, want %q", err, want)
	}
	if exitCode(err) != ExitRefused {
		t.Errorf("exit code %d, want %d", exitCode(err), ExitRefused)
	}
	var pe *fs.PathError
	cause := &fs.PathError{Op: "open", Path: "/nope", Err: fs.ErrNotExist}
	if err := codeErr(ExitNotFound, "audit log: %w: none", cause); !errors.As(err, &pe) || !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("errors.As does not reach the *fs.PathError in %v", err)
	}
	if err := usageErr("--ttl: %v", cause); errors.Is(err, fs.ErrNotExist) || exitCode(err) != ExitUsage {
		t.Errorf("%%v flattens its cause to text: %v", err)
	}
	if err := (&exitErr{code: ExitThreshold}); err.Unwrap() != nil || exitCode(err) != ExitThreshold {
		t.Errorf("a bare exit code wraps nothing")
	}
}
