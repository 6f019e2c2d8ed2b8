package redistest

import (
	"os/exec"
	"syscall"
)

// setProcAttr kills the server if the test binary dies first.
func setProcAttr(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
