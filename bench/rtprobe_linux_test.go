package main

import (
	"context"
	"os"
	"runtime"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/idemctl/idemctl/internal/testkit/redistest"
)

// The real-time probe gives its thread back: redis-server dies with the
// thread that forked it (parent-death signal), and the probe can run on
// that very thread. Here it does, by construction: one locked goroutine
// starts the server, probes, and ends; the server must outlive it.
func TestRealTimeProbeLeavesTheServerAlive(t *testing.T) {
	var (
		srv     *redistest.Server
		err     error
		samples int
		rtErr   error
	)
	offMainThread(t, func() {
		if srv, err = redistest.Start(); err != nil {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		ready := make(chan error, 1)
		rtProbe(ctx, srv.Addr, time.Millisecond, ready, func(time.Duration) { samples++ })
		rtErr = <-ready
	})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	if rtErr != nil {
		t.Logf("no real-time priority here (%v): the thread's release is still checked", rtErr)
	} else if samples == 0 {
		t.Error("the real-time probe measured nothing in 100 ms")
	}
	time.Sleep(200 * time.Millisecond) // a thread that ended would have taken the server with it by now
	c := srv.Client(0)
	defer c.Close()
	if err := c.Ping(context.Background()).Err(); err != nil {
		t.Fatalf("the server died after the probe's thread was released: %v", err)
	}
}

// offMainThread runs fn on a goroutine locked to a thread other than the
// process's main one (Go never ends that thread, which would hide a thread
// that should have been kept), and returns once that goroutine has ended.
func offMainThread(t *testing.T, fn func()) {
	hold := make(chan struct{})
	defer close(hold) // lets go of the main thread, if a goroutine held it
	for range 10 {
		ran := make(chan bool)
		go func() {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			if unix.Gettid() == os.Getpid() {
				ran <- false
				<-hold // keep the main thread busy, so the next one lands elsewhere
				return
			}
			defer close(ran)
			fn()
		}()
		if _, held := <-ran; held {
			continue
		}
		return
	}
	t.Fatal("no goroutine ran off the main thread in 10 tries")
}
