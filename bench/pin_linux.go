package main

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"

	"golang.org/x/sys/unix"
)

// Where the load phases run (-pin). In production idemctl and the other
// clients run on hosts of their own, not the server's: on a shared 2-CPU
// VM a client decoding a batch takes CPU from the server it waits on, and
// another client's latency would measure the scheduler. Pinned,
// redis-server has the first CPU to itself; the harness (whose latency
// probe runs at real-time priority, so idemctl beside it never delays it)
// and every measured client share the others. (The probe on the server's
// CPU instead halved the latency budget's rate: 1M keys in 18–21 s against
// 9.6–10.2 s with it beside idemctl, real-time or not.)
type pinning struct {
	server, client unix.CPUSet
	all            unix.CPUSet // what the harness was allowed before
	desc           string
}

// newPinning splits the CPUs this process may use; nil with fewer than two.
func newPinning() (*pinning, error) {
	var all unix.CPUSet
	if err := unix.SchedGetaffinity(0, &all); err != nil {
		return nil, fmt.Errorf("reading the CPUs this process may use: %w", err)
	}
	var cpus []int
	for i := range 1024 {
		if all.IsSet(i) {
			cpus = append(cpus, i)
		}
	}
	if len(cpus) < 2 {
		return nil, nil
	}
	p := &pinning{all: all}
	p.server.Set(cpus[0])
	for _, c := range cpus[1:] {
		p.client.Set(c)
	}
	p.desc = fmt.Sprintf("redis-server alone on CPU %d; the harness, its latency probe and every measured client on CPU %s", cpus[0], cpuList(cpus[1:]))
	return p, nil
}

func cpuList(cpus []int) string {
	if len(cpus) == 1 {
		return strconv.Itoa(cpus[0])
	}
	return fmt.Sprintf("%d–%d", cpus[0], cpus[len(cpus)-1])
}

// setTasks gives every thread of pid the set. A thread created later
// inherits its creator's set, so all of them keep it.
func setTasks(pid int, set *unix.CPUSet) error {
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		return err
	}
	for _, t := range tasks {
		tid, err := strconv.Atoi(t.Name())
		if err != nil {
			continue
		}
		// A thread that exited since the listing is no error.
		if err := unix.SchedSetaffinity(tid, set); err != nil && err != unix.ESRCH {
			return fmt.Errorf("pinning thread %d of process %d: %w", tid, pid, err)
		}
	}
	return nil
}

// hold pins the server and this process; release undoes it.
func (p *pinning) hold(serverPid int) error {
	if err := setTasks(serverPid, &p.server); err != nil {
		return err
	}
	return setTasks(os.Getpid(), &p.client)
}

func (p *pinning) release(serverPid int) error {
	err := setTasks(os.Getpid(), &p.all)
	if e := setTasks(serverPid, &p.all); err == nil {
		err = e
	}
	return err
}

// start starts cmd on the clients' CPUs: a child inherits the set of the
// thread that forks it, so that thread holds the clients' set meanwhile
// (the harness is there already while pinned; this keeps it true whatever
// the harness's own placement).
func (p *pinning) start(cmd *exec.Cmd) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var mine unix.CPUSet
	if err := unix.SchedGetaffinity(0, &mine); err != nil {
		return err
	}
	if err := unix.SchedSetaffinity(0, &p.client); err != nil {
		return err
	}
	err := cmd.Start()
	if e := unix.SchedSetaffinity(0, &mine); e != nil && err == nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return fmt.Errorf("restoring the harness's CPUs: %w", e)
	}
	return err
}
