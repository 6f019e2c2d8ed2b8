package verify

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/idemctl/idemctl/internal/units"
)

// waitDelay bounds how long a run waits, once its hook has exited or been
// killed, for a descendant that still holds its output open.
const waitDelay = 500 * time.Millisecond

// capped keeps the first max bytes written and stops the run on more.
type capped struct {
	mu       sync.Mutex
	buf      bytes.Buffer
	max      int
	overflow bool
	stop     func()
}

func (c *capped) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if room := c.max - c.buf.Len(); len(p) > room {
		c.buf.Write(p[:max(room, 0)])
		if !c.overflow && c.stop != nil {
			c.stop()
		}
		c.overflow = true
		return len(p), nil // keep draining: never block the hook on a full pipe
	}
	c.buf.Write(p)
	return len(p), nil
}

func (c *capped) bytes() ([]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return bytes.Clone(c.buf.Bytes()), c.overflow
}

// run executes argv in its own process group, with no stdin, the timeout
// and the output cap; the whole group is killed when the run ends, so
// nothing the hook started outlives it.
func (h Hook) run(ctx context.Context, argv []string) Result {
	timeout := h.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	rctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	overflowed, stopOverflow := context.WithCancel(rctx)
	defer stopOverflow()

	cmd := exec.CommandContext(overflowed, argv[0], argv[1:]...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return killGroup(cmd) }
	cmd.WaitDelay = waitDelay
	if len(h.Env) > 0 {
		cmd.Env = append(os.Environ(), h.Env...)
	}
	stdout := &capped{max: MaxOutput, stop: stopOverflow}
	stderr := &capped{max: maxStderr}
	cmd.Stdout, cmd.Stderr = stdout, stderr

	if err := cmd.Start(); err != nil {
		return unknown("the hook could not be started: %s", startErr(argv[0], err))
	}
	err := cmd.Wait()
	_ = killGroup(cmd) // descendants left behind by a hook that exited
	out, over := stdout.bytes()
	errText, _ := stderr.bytes()
	switch {
	case over:
		return unknown("the hook printed more than %s", units.FormatBytes(MaxOutput))
	case ctx.Err() != nil:
		return unknown("not verified: interrupted")
	case rctx.Err() != nil:
		return unknown("the hook timed out after %s and was killed", timeout)
	case err != nil:
		return unknown("the hook %s%s", exitText(err), stderrText(errText))
	}
	return parseOutput(out)
}

// killGroup kills the hook's process group (its pid, Setpgid).
func killGroup(cmd *exec.Cmd) error {
	if cmd.Process == nil {
		return nil
	}
	err := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	if errors.Is(err, syscall.ESRCH) {
		return os.ErrProcessDone
	}
	return err
}

// exitText says how the hook ended, in words.
func exitText(err error) string {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return fmt.Sprintf("was killed by signal %d (%s)", ws.Signal(), ws.Signal())
		}
		return fmt.Sprintf("exited with status %d", ee.ExitCode())
	}
	if errors.Is(err, exec.ErrWaitDelay) {
		return "exited but left a process holding its output open"
	}
	return "failed: " + err.Error()
}

// stderrText is the last non-empty line of the hook's stderr, for the
// reason of a failure.
func stderrText(b []byte) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	last := strings.TrimSpace(lines[len(lines)-1])
	if last == "" {
		return ""
	}
	return ": " + units.Clip(last, 200)
}

func startErr(path string, err error) string {
	switch {
	case errors.Is(err, exec.ErrNotFound), errors.Is(err, os.ErrNotExist):
		return path + " not found"
	case errors.Is(err, os.ErrPermission):
		return path + " is not executable (permission denied)"
	}
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Path + ": " + pe.Err.Error()
	}
	return err.Error()
}
