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
