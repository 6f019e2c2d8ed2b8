package verify

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/idemctl/idemctl/internal/units"
)

// drainLimit bounds how long a run reads, once its hook's process group
// is dead, from a descendant that left the group and still holds the
// hook's output open.
const drainLimit = 2 * time.Second

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
// and the output cap. The whole group is killed as soon as the hook exits
// (or times out, or prints too much), so nothing it started outlives it
// and what it printed is read to the end at once.
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
	tree, err := newProcessTree(cmd)
	if err != nil {
		return unknown("the hook could not be started: %v", err)
	}
	defer tree.close()
	cmd.Cancel = tree.kill
	if len(h.Env) > 0 {
		cmd.Env = append(os.Environ(), h.Env...)
	}
	// Our own pipes, read by our own goroutines: Wait then returns when
	// the hook exits, whoever else holds the pipes.
	stdout := &capped{max: MaxOutput, stop: stopOverflow}
	stderr := &capped{max: maxStderr}
	outR, errR, err := startWithPipes(cmd, tree)
	if err != nil {
		return unknown("the hook could not be started: %s", startErr(argv[0], err))
	}
	drained := drain(outR, stdout, errR, stderr)
	err = cmd.Wait()
	_ = tree.kill() // what the hook left running, holding its output
	heldOpen := waitDrained(drained, outR, errR)
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
	case heldOpen:
		return unknown("the hook exited but left a process, outside its process group, holding its output open")
	}
	return parseOutput(out)
}

// drain copies the hook's two pipes into their caps, each on its own
// goroutine; the channel says when each is read to its end.
func drain(outR *os.File, stdout io.Writer, errR *os.File, stderr io.Writer) chan struct{} {
	drained := make(chan struct{}, 2)
	for _, p := range []struct {
		r *os.File
		w io.Writer
	}{{outR, stdout}, {errR, stderr}} {
		go func() {
			_, _ = io.Copy(p.w, p.r)
			drained <- struct{}{}
		}()
	}
	return drained
}

// waitDrained waits up to drainLimit for both pipes to end, then closes
// them; true when a process outside the hook's group still held them open.
func waitDrained(drained chan struct{}, outR, errR *os.File) bool {
	heldOpen := false
	limit := time.NewTimer(drainLimit)
	for range 2 {
		select {
		case <-drained:
		case <-limit.C:
			heldOpen = true
			outR.Close() // unblocks the reads
			errR.Close()
			<-drained
		}
	}
	limit.Stop()
	outR.Close()
	errR.Close()
	return heldOpen
}

// startWithPipes starts cmd with stdout and stderr on pipes of our own
// and puts it in its process tree; it returns the pipes' read ends.
func startWithPipes(cmd *exec.Cmd, tree *processTree) (outR, errR *os.File, err error) {
	outR, outW, err := os.Pipe()
	if err != nil {
		return nil, nil, err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		outR.Close()
		outW.Close()
		return nil, nil, err
	}
	cmd.Stdout, cmd.Stderr = outW, errW
	err = cmd.Start()
	outW.Close()
	errW.Close()
	if err == nil {
		if err = tree.started(); err != nil {
			_ = tree.kill()
			_ = cmd.Wait()
		}
	}
	if err != nil {
		outR.Close()
		errR.Close()
		return nil, nil, err
	}
	return outR, errR, nil
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
