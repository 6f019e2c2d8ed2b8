package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/inspect/snapshot"
	"github.com/idemctl/idemctl/internal/units"
)

// threshold is one --max-… flag: crossed when the observed value exceeds max.
type threshold struct {
	Name    string `json:"name"`
	Unit    string `json:"unit"` // records, ms or bytes
	Max     int64  `json:"max"`
	Value   int64  `json:"value"`
	Crossed bool   `json:"crossed"`
	// Sampled: the value's 95 % interval, and whether the sample settles
	// the threshold either way.
	Interval  *inspect.Interval `json:"interval_95,omitempty"`
	Undecided bool              `json:"undecided,omitempty"`
	get       func(inspect.Totals) int64
}

func (t threshold) format(v int64) string {
	switch t.Unit {
	case "ms":
		return units.FormatMs(v)
	case "bytes":
		return units.FormatBytes(v)
	}
	return units.FormatCount(v)
}

func (t threshold) String() string {
	op := "<="
	switch {
	case t.Undecided:
		op = "vs"
	case t.Crossed:
		op = ">"
	}
	v := t.format(t.Value)
	if t.Interval != nil {
		v = "≈" + v + " [" + t.format(t.Interval.Low) + "–" + t.format(t.Interval.High) + "]"
	}
	return fmt.Sprintf("%s %s %s %s", t.Name, v, op, t.format(t.Max))
}

type checkResult struct {
	Verdict    string      `json:"verdict"` // ok, fail, incomplete, cannot_judge
	Message    string      `json:"message"`
	Complete   bool        `json:"complete"`
	Covered    float64     `json:"covered"`           // share of the keyspaces scanned
	Sampled    bool        `json:"sampled,omitempty"` // judged on a sample's 95% intervals
	Error      string      `json:"error,omitempty"`
	Records    int64       `json:"records"`
	Keyspaces  []string    `json:"keyspaces"`
	DurationMs int64       `json:"duration_ms"`
	Thresholds []threshold `json:"thresholds"`
	// CannotJudge: why the data cannot back the verdict (cause and fix each)
	CannotJudge []inspect.Gap   `json:"cannot_judge"`
	Source      *inspect.Source `json:"source,omitempty"`
}

// snapshotFault is the fault that stopped reading a snapshot, if one did.
func snapshotFault(snap *inspect.Snapshot) error {
	for _, k := range snap.Keyspaces {
		var se *snapshot.Error
		if errors.As(k.Coverage.Err, &se) {
			return se
		}
	}
	return nil
}

// checkCmd holds check's flags.
type checkCmd struct {
	readFlags
	maxStale, maxPNT, maxNoTTL, maxUnknown int64
	maxOldest                              time.Duration
	maxMem                                 int64
	output                                 string
	sample                                 sampleFlags
	// maxGiven (resolveFlags): the --max-… flags given, the thresholds
	// judged; one left at its default is none.
	maxGiven []string
}

// checkThresholds are check's --max-… flags.
var checkThresholds = []string{"max-stale", "max-processing-no-ttl", "max-no-ttl", "max-unknown-state", "max-oldest-processing", "max-memory"}

// resolveFlags records which of its flags were given.
func (o *checkCmd) resolveFlags(fs *pflag.FlagSet) {
	o.readFlags.resolveFlags(fs)
	o.maxGiven = slices.DeleteFunc(slices.Clone(checkThresholds), func(name string) bool { return !fs.Changed(name) })
}

// flags registers check's flags.
func (o *checkCmd) flags(fs *pflag.FlagSet) {
	fs.Int64Var(&o.maxStale, "max-stale", 0, "most stale processing records allowed")
	fs.Int64Var(&o.maxPNT, "max-processing-no-ttl", 0, "most processing records without TTL allowed")
	fs.Int64Var(&o.maxNoTTL, "max-no-ttl", 0, "most records without TTL allowed")
	fs.Int64Var(&o.maxUnknown, "max-unknown-state", 0, "most records with an unknown state allowed")
	fs.Var(durationValue(&o.maxOldest), "max-oldest-processing", "oldest processing record's age allowed, e.g. 5m")
	fs.Var(sizeValue(&o.maxMem), "max-memory", "most memory allowed for the records, e.g. 512MiB")
	outputFlag(fs, &o.output, "text", "text (one line) or json", "text", "json")
	o.sample.register(fs, "read this share of the keyspace (e.g. 1%) and judge the 95% intervals: crossed or held for sure, or 'cannot tell' (exit 3)",
		"read for this long (e.g. 30s) and judge the 95% intervals")
	o.readFlags.registerSnapshot(fs)
}

func (o *checkCmd) run(ctx context.Context, a *app, _ []string) error {
	if o.output != "text" && o.output != "json" {
		return usageErr("--output %q: want text or json", o.output)
	}
	ths, err := o.thresholds()
	if err != nil {
		return err
	}
	spec := o.spec(keyspacesRequired)
	spec.sample = &o.sample
	s, err := a.openSession(ctx, spec)
	if err != nil {
		return err
	}
	defer s.Close()
	progress := s.progress(a, "check", o.sf.quiet)
	a.noteSnapshot(s)
	snap := inspect.TakeSnapshot(ctx, s.client, s.keyspaces, s.scan, 1)
	progress.clear()
	if ctx.Err() != nil {
		// Ctrl-C: judge what was read; the verdict says how far it got.
		snap.Err = fmt.Errorf("interrupted after %.0f%% of the keyspace", snap.Covered*100)
	}
	if s.snap != nil && snap.DBKeys < 0 {
		snap.DBKeys = s.snap.Info().DBKeys // a pattern that matched nothing, in a database that holds keys
	}
	res := judge(&snap, ths)
	res.Source = s.source()
	if o.output == "json" {
		enc := json.NewEncoder(a.stdout)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		if err := enc.Encode(res); err != nil {
			return fmt.Errorf("writing output: %w", err)
		}
	} else if _, err := fmt.Fprintln(a.stdout, res.Message); err != nil {
		return fmt.Errorf("writing output: %w", err)
	}
	// The verdict on stdout says it all: the exit code carries no second copy.
	switch res.Verdict {
	case "fail":
		return &exitErr{code: ExitThreshold}
	case "incomplete":
		if se := snapshotFault(&snap); se != nil {
			return codeErr(ExitSnapshot, "%s", inspect.Line(se.Error()))
		}
		return &exitErr{code: ExitIncomplete}
	case verdictUnjudged:
		return &exitErr{code: ExitUnjudged}
	}
	return nil
}

// thresholds are the --max-… flags given, each with its limit.
func (o *checkCmd) thresholds() ([]threshold, error) {
	all := []struct {
		flag string
		th   threshold
		max  int64
	}{
		{"max-stale", threshold{Name: "stale", Unit: "records", get: func(t inspect.Totals) int64 { return t.Stale }}, o.maxStale},
		{"max-processing-no-ttl", threshold{Name: "processing_no_ttl", Unit: "records", get: func(t inspect.Totals) int64 { return t.ProcessingNoTTL }}, o.maxPNT},
		{"max-no-ttl", threshold{Name: "no_ttl", Unit: "records", get: func(t inspect.Totals) int64 { return t.NoTTL }}, o.maxNoTTL},
		{"max-unknown-state", threshold{Name: "unknown_state", Unit: "records", get: func(t inspect.Totals) int64 { return t.UnknownState }}, o.maxUnknown},
		{"max-oldest-processing", threshold{Name: "oldest_processing", Unit: "ms", get: func(t inspect.Totals) int64 { return t.OldestProcessingMs }}, o.maxOldest.Milliseconds()},
		{"max-memory", threshold{Name: "memory", Unit: "bytes", get: func(t inspect.Totals) int64 { return t.MemoryBytes }}, o.maxMem},
	}
	var ths []threshold
	for _, x := range all {
		if !slices.Contains(o.maxGiven, x.flag) {
			continue
		}
		if x.max < 0 {
			return nil, usageErr("--%s must not be negative", x.flag)
		}
		x.th.Max = x.max
		ths = append(ths, x.th)
	}
	if len(ths) == 0 {
		return nil, usageErr("no threshold given: pass at least one of --max-stale, --max-processing-no-ttl, --max-no-ttl, --max-unknown-state, --max-oldest-processing, --max-memory")
	}
	return ths, nil
}

// judge compares a snapshot's totals with the thresholds. Every value only
// grows as a scan reads more, so a threshold crossed by a partial scan is
// crossed for certain, while one that holds proves nothing.
func judge(snap *inspect.Snapshot, ths []threshold) checkResult {
	tot := snap.Totals()
	res := checkResult{Complete: snap.Complete, Covered: snap.Covered, Records: tot.Records, DurationMs: snap.Duration.Milliseconds()}
	for _, k := range snap.Keyspaces {
		res.Keyspaces = append(res.Keyspaces, k.Name)
	}
	if !snap.Complete && snap.Err != nil {
		res.Error = snap.Err.Error()
	}
	res.CannotJudge = relevantGaps(snap.Gaps(), ths)
	ivs := snap.SampleIntervals() // nil unless a sample was read
	res.Sampled = ivs != nil
	var crossed, held, open []string
	for _, t := range ths {
		t.Value = t.get(tot)
		t.Crossed = t.Value > t.Max
		if ivs != nil {
			judgeSampled(&t, ivs)
		}
		res.Thresholds = append(res.Thresholds, t)
		switch {
		case t.Undecided:
			open = append(open, t.String())
		case t.Crossed:
			crossed = append(crossed, t.String())
		default:
			held = append(held, t.String())
		}
	}
	scope := fmt.Sprintf("%s records in %s (%s), scanned in %s", units.FormatCount(tot.Records), plural(len(res.Keyspaces), "keyspace"),
		strings.Join(res.Keyspaces, ", "), units.FormatMs(max(snap.Duration, time.Millisecond).Milliseconds()))
	if ivs != nil {
		scope = fmt.Sprintf("estimated from a %.1f%% sample (95%% intervals): ", snap.Covered*100) + scope
	}
	switch {
	case len(crossed) > 0:
		res.Verdict = "fail"
		res.Message = "FAIL: " + strings.Join(crossed, ", ")
		if len(held) > 0 {
			res.Message += "; ok: " + strings.Join(held, ", ")
		}
		if !snap.Complete && snap.Err != nil {
			scope += "; scan INCOMPLETE, so these are lower bounds: " + res.Error
		} else if len(res.CannotJudge) > 0 {
			scope += "; also " + unjudgedMessage(res.CannotJudge, nil)
		}
	case !snap.Complete && snap.Err != nil:
		res.Verdict = "incomplete"
		res.Message = "INCOMPLETE: " + inspect.Line(res.Error) + "; thresholds not judged (so far: " + strings.Join(held, ", ") + ")"
	case len(open) > 0:
		res.Verdict = "incomplete" // more data can settle it: exit 3, as for a partial scan
		res.Message = "CANNOT TELL from the sample: " + strings.Join(open, ", ") + "; read more (a larger --sample) or scan all"
		if len(held) > 0 {
			res.Message += "; ok: " + strings.Join(held, ", ")
		}
	case len(res.CannotJudge) > 0:
		res.Verdict = verdictUnjudged
		res.Message = unjudgedMessage(res.CannotJudge, held)
	default:
		res.Verdict = "ok"
		res.Message = "OK: " + strings.Join(held, ", ")
	}
	res.Message = units.OneLine(res.Message + " — " + scope)
	return res
}

// judgeSampled settles t on its 95 % interval: crossed when the whole
// interval is above the limit, held when it is at or below, otherwise
// undecided. The oldest processing age has no interval — a sample's oldest
// is only a lower bound — so it can be crossed but never cleared.
func judgeSampled(t *threshold, ivs map[string]inspect.Interval) {
	iv, ok := ivs[t.Name]
	if !ok {
		t.Crossed, t.Undecided = t.Value > t.Max, t.Value <= t.Max
		return
	}
	t.Interval = &iv
	t.Crossed, t.Undecided = iv.Low > t.Max, iv.Low <= t.Max && iv.High > t.Max
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return strconv.Itoa(n) + " " + word + "s"
}
