package inspect

import (
	"context"
	"errors"
	"time"

	"github.com/redis/go-redis/v9"
)

// Stop, returned by a Scan callback, ends the scan early without an error.
var Stop = errors.New("stop scanning")

// Scan runs ScanAll over kss and calls fn with each batch, one at a time, in
// the caller's goroutine. Records are handed over a batch at a time (about
// Options.Count of them), so the hand-off costs nothing per record and at
// most a few batches are held in flight. An error from fn cancels the scan;
// Scan waits for it to wind down and returns that error (nil for Stop) with
// the coverage of what was read.
func Scan(ctx context.Context, c redis.UniversalClient, kss []*Keyspace, opt Options, fn func(Batch) error) ([]Coverage, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	s := StartScan(ctx, c, kss, opt)
	var err error
	pr, started := Progress{}, time.Now()
	for b := range s.Batches {
		if err != nil {
			continue // drain: the scan is winding down
		}
		if err = fn(b); err != nil {
			cancel()
		}
		if opt.Progress != nil {
			pr.Done = max(pr.Done, b.Done) // batches of several pipelines may cross
			pr.Records += int64(len(b.Records))
			pr.Elapsed = time.Since(started)
			opt.Progress(pr)
		}
	}
	if errors.Is(err, Stop) {
		err = nil
	}
	return s.Coverage(), err
}

// Stream is a scan running in the background, for callers that must not
// block on it (the TUI reads one group of batches per message).
type Stream struct {
	// Batches delivers the records; it is closed when the scan ends.
	Batches <-chan Batch
	done    chan struct{}
	covs    []Coverage
}

// streamBuffer is how many batches may wait for a slow reader before the
// scan's readers pause: enough to keep them busy, little enough to bound
// memory.
const streamBuffer = 8

// StartScan starts ScanAll over kss in the background. Read Batches until it
// is closed, then Coverage. Cancel ctx to stop the scan early.
func StartScan(ctx context.Context, c redis.UniversalClient, kss []*Keyspace, opt Options) *Stream {
	ch := make(chan Batch, streamBuffer)
	s := &Stream{Batches: ch, done: make(chan struct{})}
	go func() {
		s.covs = ScanAll(ctx, c, kss, opt, ch)
		close(s.done)
	}()
	return s
}

// Coverage waits for the scan to end and returns one coverage per keyspace
// and node. It may be called more than once.
func (s *Stream) Coverage() []Coverage {
	<-s.done
	return s.covs
}
