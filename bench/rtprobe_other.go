//go:build !linux

package main

import (
	"context"
	"errors"
	"time"
)

// rtProbe needs Linux's SCHED_FIFO; elsewhere the harness uses the plain probe.
func rtProbe(_ context.Context, _ string, _ time.Duration, ready chan<- error, _ func(time.Duration)) {
	ready <- errors.New("a real-time probe needs Linux")
}
