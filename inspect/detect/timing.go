package detect

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/internal/units"
)

// Proposal is one timing setting detect proposes from the sampled records,
// beside the preset's default, with what it rests on.
type Proposal struct {
	Setting  string `json:"setting"` // reserve_ttl, processing_timeout, retention
	Value    string `json:"value"`   // "" when the sample cannot support one
	Default  string `json:"preset_default"`
	Evidence string `json:"evidence"`
}

// minTimingSample is how many records a timing proposal needs.
const minTimingSample = 5

// proposeTiming reads the sampled records as preset reads them and
// proposes reserve_ttl (the largest TTL left on a processing record: the
// newest one's is nearly the TTL the reserve step sets), retention (the
// same for completed records) and processing_timeout (three times the
// median processing age under the proposed reserve TTL: stuck records
// inflate the tail, so the median is used).
func proposeTiming(ctx context.Context, smp detectSample, preset, pattern string, keys []string) ([]Proposal, error) {
	s, err := inspect.Preset(preset)
	if err != nil {
		return nil, err
	}
	ks, err := inspect.NewKeyspace(inspect.KeyspaceSpec{Schema: s, Match: pattern})
	if err != nil {
		return nil, err
	}
	recs, err := smp.records(ctx, ks, keys)
	if err != nil {
		return nil, err
	}
	procTTL, doneTTL := sampledTTLs(recs)
	reserve, reserveD := proposeReserve(s, preset, procTTL)
	timeout := proposeTimeout(s.Defaults, reserve.Value, reserveD, procTTL)
	retention := proposeRetention(s.Defaults, doneTTL)
	return []Proposal{reserve, timeout, retention}, nil
}

// sampledTTLs are the TTLs left on the decoded processing records and on
// the completed ones.
func sampledTTLs(recs []inspect.Record) (procTTL, doneTTL []int64) {
	for i := range recs {
		r := &recs[i]
		if r.TTLms <= 0 || r.Flags&(inspect.FlagUndecoded|inspect.FlagWrongType) != 0 {
			continue
		}
		switch r.State {
		case inspect.StateProcessing:
			procTTL = append(procTTL, r.TTLms)
		case inspect.StateSucceeded, inspect.StateFailed, inspect.StateReconciled:
			doneTTL = append(doneTTL, r.TTLms)
		}
	}
	return procTTL, doneTTL
}

// proposeReserve proposes reserve_ttl, which only a schema reading ages
// from the TTL needs, and returns it as a duration too (0: none).
func proposeReserve(s *inspect.Schema, preset string, procTTL []int64) (Proposal, time.Duration) {
	reserve := Proposal{Setting: "reserve_ttl", Default: units.ConfigDuration(s.Defaults.ReserveTTL.D())}
	switch {
	case !s.AgeFromTTL:
		reserve.Evidence = "not needed: " + preset + " stores the times it needs in the record"
	case len(procTTL) < minTimingSample:
		reserve.Evidence = fmt.Sprintf("not proposed: %d processing records with a TTL in the sample (%d needed); sample more (--sample) while requests are in flight", len(procTTL), minTimingSample)
	default:
		top := slices.Max(procTTL)
		d := inspect.ProposeDuration(top)
		reserve.Value = units.ConfigDuration(d)
		reserve.Evidence = fmt.Sprintf("the largest TTL left on %d sampled processing records is %s: the newest record's TTL is nearly the one its reserve step set", len(procTTL), units.FormatMs(top))
		return reserve, d
	}
	return reserve, 0
}

// proposeTimeout proposes processing_timeout from the processing ages
// under the proposed reserve TTL (reserveD, written reserveValue).
func proposeTimeout(d inspect.Defaults, reserveValue string, reserveD time.Duration, procTTL []int64) Proposal {
	timeout := Proposal{Setting: "processing_timeout", Default: units.ConfigDuration(d.ProcessingTimeout.D())}
	if reserveD <= 0 {
		timeout.Evidence = "not proposed: no processing ages to measure (see reserve_ttl)"
		return timeout
	}
	ages := make([]int64, len(procTTL))
	for i, t := range procTTL {
		ages[i] = max(reserveD.Milliseconds()-t, 0)
	}
	sort.Slice(ages, func(i, j int) bool { return ages[i] < ages[j] })
	med := ages[len(ages)/2]
	timeout.Value = units.ConfigDuration(max(inspect.ProposeDuration(3*med), time.Second))
	timeout.Evidence = fmt.Sprintf("three times the median age (%s) of %d sampled processing records under reserve_ttl %s; crashed records inflate the tail, so the median is used",
		units.FormatMs(med), len(ages), reserveValue)
	return timeout
}

// proposeRetention proposes retention from the TTLs left on completed
// records.
func proposeRetention(d inspect.Defaults, doneTTL []int64) Proposal {
	retention := Proposal{Setting: "retention", Default: units.ConfigDuration(d.Retention.D())}
	if len(doneTTL) < minTimingSample {
		retention.Evidence = fmt.Sprintf("not proposed: %d completed records with a TTL in the sample (%d needed)", len(doneTTL), minTimingSample)
		return retention
	}
	top := slices.Max(doneTTL)
	retention.Value = units.ConfigDuration(inspect.ProposeDuration(top))
	retention.Evidence = fmt.Sprintf("the largest TTL left on %d sampled completed records is %s: the TTL the complete step sets", len(doneTTL), units.FormatMs(top))
	return retention
}

// timingYAML appends the proposed settings to a keyspace block.
func timingYAML(ps []Proposal) string {
	out := ""
	for _, p := range ps {
		if p.Value != "" {
			out += fmt.Sprintf("    %s: %s # preset default %s\n", p.Setting, p.Value, p.Default)
		}
	}
	return out
}
