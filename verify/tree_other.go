//go:build !unix && !windows

package verify

import "os/exec"

// processTree is the hook alone where the system has no process groups
// idemctl knows: what the hook starts may outlive a timeout.
type processTree struct{ cmd *exec.Cmd }

func newProcessTree(cmd *exec.Cmd) (*processTree, error) { return &processTree{cmd: cmd}, nil }

func (t *processTree) started() error { return nil }

func (t *processTree) kill() error {
	if t.cmd.Process == nil {
		return nil
	}
	return t.cmd.Process.Kill()
}

func (t *processTree) close() {}
