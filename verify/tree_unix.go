//go:build unix

package verify

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
)

// processTree is a hook and everything it starts, ended together: on Unix
// the hook's own process group.
type processTree struct{ cmd *exec.Cmd }

func newProcessTree(cmd *exec.Cmd) (*processTree, error) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	return &processTree{cmd: cmd}, nil
}

// started is called once the hook runs: the group exists by then.
func (t *processTree) started() error { return nil }

// kill kills the whole group.
func (t *processTree) kill() error {
	if t.cmd.Process == nil {
		return nil
	}
	err := syscall.Kill(-t.cmd.Process.Pid, syscall.SIGKILL)
	if errors.Is(err, syscall.ESRCH) {
		return os.ErrProcessDone
	}
	return err
}

func (t *processTree) close() {}
