package cli

import (
	"time"

	"github.com/spf13/pflag"

	"github.com/idemctl/idemctl/inspect"
)

// sampleFlags are --sample and --sample-time, shared by stats and check:
// read part of the keyspace and answer with 95% intervals (use says how).
type sampleFlags struct {
	share float64
	time  time.Duration
}

func (f *sampleFlags) register(fs *pflag.FlagSet, shareUse, timeUse string) {
	fs.Var(shareValue(&f.share), "sample", shareUse)
	fs.Var(durationValue(&f.time), "sample-time", timeUse)
}

// apply sets the scan to stop at the sample.
func (f sampleFlags) apply(o *inspect.Options) { o.Sample, o.SampleTime = f.share, f.time }

// applyLive is apply, refusing a sample of a snapshot: the file is read
// whole, at disk speed, with no server to spare.
func (f sampleFlags) applyLive(o *inspect.Options, s *session) error {
	if s.snap != nil && (f.share > 0 || f.time > 0) {
		return usageErr("--sample and --sample-time spare a live server; a snapshot is read whole (drop them, or --max-keys to stop early)")
	}
	f.apply(o)
	return nil
}
