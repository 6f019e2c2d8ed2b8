package main

import (
	"bytes"
	"context"
	"fmt"
	"net/netip"
	"runtime"
	"time"

	"golang.org/x/sys/unix"
)

// rtProbe PINGs addr every interval until ctx ends and hands each round
// trip to seen, from an OS thread of its own at real-time priority
// (SCHED_FIFO) with blocking syscalls only: its wake-ups come straight from
// the kernel, never from Go's scheduler, and preempt whatever else runs.
// That is another client on a host of its own: what it measures is the
// server's queue, not this machine's CPU scheduler, on which a probe that
// shares two CPUs with the server and the scan would otherwise wait its
// turn. It returns an error, before any probe, when the thread cannot be
// made real-time (not root, no CAP_SYS_NICE): the caller falls back.
func rtProbe(ctx context.Context, addr string, every time.Duration, ready chan<- error, seen func(time.Duration)) {
	runtime.LockOSThread()
	fd, err := rtSetup(addr)
	defer release()
	ready <- err
	if err != nil {
		return
	}
	defer unix.Close(fd)
	ping := []byte("*1\r\n$4\r\nPING\r\n")
	want := []byte("+PONG\r\n")
	buf := make([]byte, 64)
	var next unix.Timespec
	_ = unix.ClockGettime(unix.CLOCK_MONOTONIC, &next)
	for ctx.Err() == nil {
		next = unix.NsecToTimespec(next.Nano() + every.Nanoseconds())
		for unix.ClockNanosleep(unix.CLOCK_MONOTONIC, unix.TIMER_ABSTIME, &next, nil) == unix.EINTR {
		}
		began := time.Now()
		if _, err := unix.Write(fd, ping); err != nil {
			return
		}
		got := 0
		for got < len(want) {
			n, err := unix.Read(fd, buf[got:])
			if err == unix.EINTR {
				continue
			}
			if err != nil || n <= 0 {
				return
			}
			got += n
		}
		if bytes.Equal(buf[:got], want) {
			seen(time.Since(began))
		}
	}
}

// release gives the probe's thread back to Go at normal priority. The
// thread must not exit instead (what a goroutine still locked to it at its
// end does): redis-server is started with a parent-death signal, which
// Linux sends when the *thread* that forked it ends, and that can be this
// one; at 10M the server was killed between two load phases that way.
// Only if the priority cannot be reset does the thread end with it.
func release() {
	if unix.SchedSetAttr(0, &unix.SchedAttr{Policy: unix.SCHED_NORMAL}, 0) == nil {
		runtime.UnlockOSThread()
	}
}

func rtSetup(addr string) (int, error) {
	ap, err := netip.ParseAddrPort(addr)
	if err != nil || !ap.Addr().Is4() {
		return -1, fmt.Errorf("probe address %q: want IPv4 host:port", addr)
	}
	if err := unix.SchedSetAttr(0, &unix.SchedAttr{Policy: unix.SCHED_FIFO, Priority: 1}, 0); err != nil {
		return -1, fmt.Errorf("real-time priority for the probe: %w", err)
	}
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, err
	}
	_ = unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1)
	tv := unix.NsecToTimeval((30 * time.Second).Nanoseconds())
	_ = unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv)
	if err := unix.Connect(fd, &unix.SockaddrInet4{Port: int(ap.Port()), Addr: ap.Addr().As4()}); err != nil {
		unix.Close(fd)
		return -1, fmt.Errorf("probe connection to %s: %w", addr, err)
	}
	return fd, nil
}
