// Package detect proposes a keyspace for keys matching a pattern, from a
// sample read live or from a snapshot: the preset that explains the most
// records with its evidence and timing, a drafted schema when none does,
// or a dedupe ledger.
//
// Floor 1 of ARCHITECTURE.md, the read engine: it sits above the subjects
// whose keys it tells apart and may import inspect, inspect/ledger and the
// foundations.
package detect

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/inspect/ledger"
	"github.com/idemctl/idemctl/inspect/topology"
)

// Candidate is how well one preset explains a sample of keys.
type Candidate struct {
	Preset     string         `json:"preset"`
	Matched    int            `json:"matched"`    // records decoded with a known state
	Companions int            `json:"companions"` // lock keys this preset recognises
	Template   int            `json:"template"`   // keys fitting its key template
	States     map[string]int `json:"states"`     // stored state values seen
	Evidence   []string       `json:"evidence"`
	// Rejected says why this preset is never proposed although records
	// decode: its own evidence contradicts it ("" when it may be).
	Rejected string `json:"rejected,omitempty"`
	keys     map[string]bool
}

// DetectResult is detect's proposal with its evidence.
type DetectResult struct {
	Match      string         `json:"match"`
	Sampled    int            `json:"sampled"`
	Types      map[string]int `json:"types"`
	Best       *Candidate     `json:"best,omitempty"`
	Candidates []Candidate    `json:"candidates"`
	Mixed      []string       `json:"mixed,omitempty"`  // other presets explaining keys the best does not
	Timing     []Proposal     `json:"timing,omitempty"` // reserve_ttl, processing_timeout, retention from the sample
	YAML       string         `json:"yaml"`

	// Ledger: the keys are a dedupe ledger, not records (detect_ledger.go).
	Ledger *ledger.Proposal `json:"ledger,omitempty"`
}

// Detect samples up to n keys matching pattern and scores every preset on
// them: which decodes the most records with a known state, whose template
// fits, which lock companions it recognises.
func Detect(ctx context.Context, c redis.UniversalClient, pattern string, n int) (DetectResult, error) {
	return DetectProgress(ctx, c, pattern, n, nil)
}

// DetectProgress is Detect telling progress how far the search for sample
// keys has come: on a sparse pattern in a big database, SCAN MATCH may walk
// most of the table to find them. Done is the larger of the share of keys
// found and the share of the table visited.
func DetectProgress(ctx context.Context, c redis.UniversalClient, pattern string, n int, progress func(inspect.Progress)) (DetectResult, error) {
	keys, err := sampleKeys(ctx, c, pattern, n, progress)
	if err != nil {
		return DetectResult{Match: pattern, Types: map[string]int{}}, err
	}
	return detect(ctx, &liveSample{c: c, keys: keys}, pattern, keys)
}

// detectSample is what detect reads its sampled keys through: a live
// server, or a snapshot's values read once.
type detectSample interface {
	// types counts the sampled keys by Redis type.
	types(ctx context.Context) (map[string]int, error)
	// records reads keys as ks's records.
	records(ctx context.Context, ks *inspect.Keyspace, keys []string) ([]inspect.Record, error)
	// docs are up to draftSample records whole, for a drafted schema:
	// small hashes' fields, or strings' JSON objects.
	docs(ctx context.Context, container string) []sampleDoc
}

// sampleDoc is one record read whole for the draft.
type sampleDoc struct {
	fields map[string]string // a hash
	json   map[string]any    // a string holding a JSON object
}

// liveSample reads the sample from the server.
type liveSample struct {
	c    redis.UniversalClient
	keys []string
}

func (l *liveSample) types(ctx context.Context) (map[string]int, error) {
	out := map[string]int{}
	types := make([]*redis.StatusCmd, len(l.keys))
	pipe := l.c.Pipeline()
	for i, k := range l.keys {
		types[i] = pipe.Type(ctx, k)
	}
	if err := inspect.ExecPipe(ctx, pipe); err != nil {
		return out, err
	}
	for _, t := range types {
		out[t.Val()]++
	}
	return out, nil
}

func (l *liveSample) records(ctx context.Context, ks *inspect.Keyspace, keys []string) ([]inspect.Record, error) {
	b, err := inspect.ReadKeys(ctx, l.c, ks, keys, inspect.Options{})
	return b.Records, err
}

func (l *liveSample) docs(ctx context.Context, container string) []sampleDoc {
	var out []sampleDoc
	if container == "hash" {
		for _, m := range smallHashes(ctx, l.c, l.keys) {
			out = append(out, sampleDoc{fields: m})
		}
		return out
	}
	for _, k := range l.keys {
		if len(out) == draftSample {
			break
		}
		v, _ := l.c.GetRange(ctx, k, 0, 4095).Result()
		var doc map[string]any
		if json.Unmarshal([]byte(v), &doc) == nil {
			out = append(out, sampleDoc{json: doc})
		}
	}
	return out
}

// detect scores every preset on the sampled keys and proposes the best,
// or drafts a schema when none fits.
func detect(ctx context.Context, smp detectSample, pattern string, keys []string) (DetectResult, error) {
	res := DetectResult{Match: pattern, Types: map[string]int{}, Sampled: len(keys)}
	if len(keys) == 0 {
		return res, fmt.Errorf("no keys match %q", pattern)
	}
	var err error
	if res.Types, err = smp.types(ctx); err != nil {
		return res, err
	}
	if res.Ledger = proposeLedger(ctx, smp, res.Types, keys); res.Ledger != nil {
		res.YAML = res.Ledger.YAML(pattern)
		return res, nil
	}
	for _, name := range inspect.PresetNames() {
		cand, err := score(ctx, smp, name, pattern, keys)
		if err != nil {
			return res, err
		}
		res.Candidates = append(res.Candidates, cand)
	}
	sort.SliceStable(res.Candidates, func(i, j int) bool {
		a, b := res.Candidates[i], res.Candidates[j]
		if (a.Rejected == "") != (b.Rejected == "") {
			return a.Rejected == ""
		}
		if a.Matched+a.Companions != b.Matched+b.Companions {
			return a.Matched+a.Companions > b.Matched+b.Companions
		}
		return a.Template > b.Template
	})
	best := res.Candidates[0]
	if best.Rejected != "" || best.Matched == 0 || (best.Matched+best.Companions)*2 < len(keys) {
		res.YAML = proposeMapping(ctx, smp, pattern, len(keys), res.Types)
		return res, nil
	}
	res.Best = &res.Candidates[0]
	res.Mixed = mixed(res.Candidates, len(keys))
	if res.Timing, err = proposeTiming(ctx, smp, res.Best.Preset, pattern, keys); err != nil {
		return res, err
	}
	res.YAML = presetYAML(res.Best.Preset, pattern) + timingYAML(res.Timing)
	return res, nil
}

// mixed says what the best candidate (the first) leaves unexplained.
func mixed(cands []Candidate, sampled int) []string {
	best := cands[0]
	var out []string
	if rest := sampled - best.Matched - best.Companions; rest > 0 {
		out = append(out, fmt.Sprintf("%d of %d sampled keys are not %s records (another format, or not idempotency records)",
			rest, sampled, best.Preset))
	}
	for _, other := range cands[1:] {
		if other.Rejected != "" {
			continue // its own evidence contradicts it: it explains nothing
		}
		extra := 0
		for k := range other.keys {
			if !best.keys[k] {
				extra++
			}
		}
		if extra > 0 && extra*10 >= sampled {
			out = append(out, fmt.Sprintf("%s explains %d keys %s does not", other.Preset, extra, best.Preset))
		}
	}
	return out
}

func sampleKeys(ctx context.Context, c redis.UniversalClient, pattern string, n int, progress func(inspect.Progress)) ([]string, error) {
	nodes, err := topology.Primaries(ctx, c)
	if err != nil {
		return nil, err
	}
	var out []string
	started := time.Now()
	for i, nd := range nodes {
		var cursor uint64
		for len(out) < n {
			keys, next, err := nd.Client.Scan(ctx, cursor, pattern, 1000).Result()
			if err != nil {
				return nil, err
			}
			for _, k := range keys {
				if len(out) < n {
					out = append(out, k)
				}
			}
			if cursor = next; cursor == 0 {
				break
			}
			if progress != nil {
				table := (float64(i) + inspect.CursorShare(cursor)) / float64(len(nodes))
				progress(inspect.Progress{Done: max(table, float64(len(out))/float64(n)), Records: int64(len(out)), Elapsed: time.Since(started)})
			}
		}
	}
	return out, nil
}

// score reads the sampled keys as preset name's records and weighs what
// they show for and against it.
func score(ctx context.Context, smp detectSample, name, pattern string, keys []string) (Candidate, error) {
	cand := Candidate{Preset: name, States: map[string]int{}, keys: map[string]bool{}}
	s, _ := inspect.Preset(name)
	ks, err := inspect.NewKeyspace(inspect.KeyspaceSpec{Schema: s, Match: pattern})
	if err != nil {
		return cand, err
	}
	records := cand.takeCompanions(s, keys)
	recs, err := smp.records(ctx, ks, records)
	if err != nil {
		return cand, err
	}
	fps, stored := cand.tally(s, ks, recs)
	cand.Rejected = rejection(&cand, s, ks, len(recs), stored)
	cand.addEvidence(s, ks, len(records), fps)
	return cand, nil
}

// takeCompanions counts the keys that are the schema's lock companions
// and returns the rest, the keys to read as records.
func (c *Candidate) takeCompanions(s *inspect.Schema, keys []string) []string {
	var records []string
	for _, k := range keys {
		if s.Lock != nil {
			if _, ok := s.Lock.RecordKey(k); ok {
				c.Companions++
				c.keys[k] = true
				continue
			}
		}
		records = append(records, k)
	}
	return records
}

// tally counts the records that fit the key template and those that
// decode with a known state, by stored state; fps of the latter hold a
// fingerprint, stored a state of their own (not the "missing" default).
func (c *Candidate) tally(s *inspect.Schema, ks *inspect.Keyspace, recs []inspect.Record) (fps, stored int) {
	const bad = inspect.FlagWrongType | inspect.FlagUndecoded | inspect.FlagDecodeError | inspect.FlagUnknownState
	for i := range recs {
		r := &recs[i]
		if r.Groups != nil && !ks.Template.Empty() {
			c.Template++
		}
		if r.Flags&bad != 0 {
			continue
		}
		c.Matched++
		c.keys[r.Key] = true
		c.States[inspect.Sanitize(capText(r.RawState, 40))]++
		if r.Fingerprint != "" {
			fps++
		}
		if r.RawState != "" || s.Codec == inspect.CodecRaw {
			stored++
		}
	}
	return fps, stored
}

// rejection says why the preset is never proposed, or "". A preset is
// proposed only on positive evidence: records that merely fail to
// contradict it (every state taken from its "missing" default, keys its
// template rejects) are not evidence.
func rejection(c *Candidate, s *inspect.Schema, ks *inspect.Keyspace, read, stored int) string {
	switch {
	case c.Matched == 0:
	case !ks.Template.Empty() && read > 0 && c.Template == 0:
		return fmt.Sprintf("its key template %s fits none of the %d records", ks.Template, read)
	case stored == 0 && len(s.Requires) == 0:
		return fmt.Sprintf("its state field %s is empty on all %d records (each read by default as %s)", s.State.Field, c.Matched, s.MissingState())
	}
	return ""
}

// addEvidence states what the tally showed, one line a fact, of the
// records read from keysRead keys.
func (c *Candidate) addEvidence(s *inspect.Schema, ks *inspect.Keyspace, keysRead, fps int) {
	if c.Matched > 0 {
		var st []string
		for v, n := range c.States {
			st = append(st, fmt.Sprintf("%q×%d", v, n))
		}
		sort.Strings(st)
		field := s.State.Field
		if s.Codec == inspect.CodecRaw {
			field = "(the value)"
		}
		c.Evidence = append(c.Evidence, fmt.Sprintf("%d of %d records decode as %s %s; state %s: %s",
			c.Matched, keysRead, s.Container, s.Codec, field, strings.Join(st, ", ")))
		if s.Fingerprint != "" {
			c.Evidence = append(c.Evidence, fmt.Sprintf("fingerprint %s present on %d", s.Fingerprint, fps))
		}
	}
	if !ks.Template.Empty() {
		c.Evidence = append(c.Evidence, fmt.Sprintf("key template %s fits %d of %d keys", ks.Template, c.Template, keysRead))
	}
	if len(s.Requires) > 0 && c.Matched > 0 {
		c.Evidence = append(c.Evidence, fmt.Sprintf("%s present on %d", strings.Join(s.Requires, ", "), c.Matched))
	}
	if c.Companions > 0 {
		c.Evidence = append(c.Evidence, fmt.Sprintf("%d lock companions (%s)", c.Companions, s.Lock.Key))
	}
	if c.Rejected != "" {
		c.Evidence = append(c.Evidence, "not proposed: "+c.Rejected)
	}
}

func presetYAML(preset, pattern string) string {
	return fmt.Sprintf("keyspaces:\n  - name: %s\n    match: %s\n    preset: %s\n", preset, inspect.YAMLQuote(pattern), preset)
}
