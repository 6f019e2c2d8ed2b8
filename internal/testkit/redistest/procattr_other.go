//go:build !linux

package redistest

import "os/exec"

func setProcAttr(cmd *exec.Cmd) {}
