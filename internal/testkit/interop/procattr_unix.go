//go:build unix

package interop

import (
	"os/exec"
	"syscall"
)

// The driver gets its own process group so that stopping it also ends the
// children it spawns for crash calls.
func setProcAttr(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
