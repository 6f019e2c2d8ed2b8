//go:build !linux

package main

import "os/exec"

// pinning is Linux's (sched_setaffinity); elsewhere nothing is pinned.
type pinning struct{ desc string }

func newPinning() (*pinning, error)          { return nil, nil }
func (p *pinning) hold(int) error            { return nil }
func (p *pinning) release(int) error         { return nil }
func (p *pinning) start(cmd *exec.Cmd) error { return cmd.Start() }
