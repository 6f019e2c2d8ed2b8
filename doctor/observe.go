package doctor

import (
	"strings"

	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/internal/units"
)

// samplesPer bounds the sample keys kept per keyspace and category.
const samplesPer = 3

// ksObs is what the rules need beyond the scan's aggregate, per keyspace,
// in memory bounded by the number of keyspaces.
type ksObs struct {
	procTTLMax int64 // largest remaining TTL of a processing record
	procTTLN   int64 // processing records with a TTL
	doneTTLMax int64 // largest remaining TTL of a completed record
	doneN      int64 // completed records (succeeded, failed, reconciled) with a TTL
	doneMem    int64 // their memory, where known
	withTTL    int64 // records with a TTL (what volatile-* eviction may pick)
	noDeadline int64 // processing records of a schema with a deadline field that store none
	respMax    int64
	samples    map[string][]string
}

type observations struct{ ks map[string]*ksObs }

func newObservations() *observations { return &observations{ks: map[string]*ksObs{}} }

func (o *observations) get(name string) *ksObs {
	k := o.ks[name]
	if k == nil {
		k = &ksObs{samples: map[string][]string{}}
		o.ks[name] = k
	}
	return k
}

func (k *ksObs) sample(cat, key string) {
	if s := k.samples[cat]; len(s) < samplesPer {
		k.samples[cat] = append(s, units.Clip(inspect.Sanitize(strings.Clone(key)), 160))
	}
}

// add folds one streamed record in.
func (o *observations) add(r *inspect.Record) {
	if r.Keyspace == nil {
		return
	}
	k := o.get(r.Keyspace.Name)
	if r.TTLms > 0 {
		k.withTTL++
	}
	switch r.State {
	case inspect.StateProcessing:
		if r.TTLms > 0 {
			k.procTTLN++
			k.procTTLMax = max(k.procTTLMax, r.TTLms)
		}
		if s := r.Keyspace.Schema; s != nil && s.Deadline != nil && r.DeadlineMs == 0 && r.Flags&inspect.FlagUndecoded == 0 {
			k.noDeadline++
			k.sample("no_deadline", r.Key)
		}
	case inspect.StateSucceeded, inspect.StateFailed, inspect.StateReconciled:
		if r.TTLms > 0 {
			k.doneN++
			k.doneTTLMax = max(k.doneTTLMax, r.TTLms)
			k.doneMem += max(r.MemoryBytes, 0)
		}
	}
	if g := r.AgeGap(); g != inspect.AgeGapNone {
		k.sample("age:"+g.String(), r.Key)
	}
	k.respMax = max(k.respMax, r.ResponseLen)
	for _, f := range []inspect.Flags{inspect.FlagNoTTL, inspect.FlagProcessingNoTTL, inspect.FlagUndecoded,
		inspect.FlagMissingFingerprint, inspect.FlagLargeResponse, inspect.FlagFieldTTLMixed} {
		if r.Flags.Has(f) {
			if f == inspect.FlagNoTTL && r.State == inspect.StateProcessing {
				continue // sampled as processing_no_ttl
			}
			k.sample(f.String(), r.Key)
		}
	}
}
