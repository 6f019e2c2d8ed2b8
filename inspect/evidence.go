package inspect

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/idemctl/idemctl/internal/units"
)

// AgeGap says why a processing record's staleness cannot be judged. A record
// already known stale, or one with a stored deadline, is judged; the others
// with no derivable age are not, and a verdict that counts them as fresh
// would be an all-clear nobody can back.
type AgeGap uint8

const (
	AgeGapNone            AgeGap = iota
	AgeGapTTLAboveReserve        // TTL above the configured reserve TTL: reserve TTL − TTL is meaningless
	AgeGapNoReserveTTL           // the schema derives age from the TTL, but no reserve TTL is configured
	AgeGapNoTTL                  // no TTL and no stored timestamp
	AgeGapTTLUnreadable          // PTTL was refused or failed
	AgeGapNoTimestamp            // no timestamp, and the schema does not derive age from the TTL
	numAgeGaps
)

var ageGapNames = [numAgeGaps]string{"", "ttl_above_reserve", "no_reserve_ttl", "no_ttl", "ttl_unreadable", "no_timestamp"}

func (g AgeGap) String() string { return ageGapNames[g] }

// AgeGapNames lists the causes, for metric labels and documentation.
func AgeGapNames() []string { return ageGapNames[1:] }

// AgeGap reports why this record's staleness cannot be judged, or
// AgeGapNone when it can (or it is not processing).
func (r *Record) AgeGap() AgeGap {
	if r.State != StateProcessing || r.AgeMs >= 0 || r.DeadlineMs > 0 || r.Flags.Has(FlagStale) {
		return AgeGapNone
	}
	fromTTL := r.Keyspace != nil && r.Keyspace.Schema != nil && r.Keyspace.Schema.AgeFromTTL
	switch {
	case r.TTLms == -1:
		return AgeGapNoTTL
	case r.TTLms < 0:
		return AgeGapTTLUnreadable
	case fromTTL && r.Keyspace.ReserveTTL <= 0:
		return AgeGapNoReserveTTL
	case fromTTL:
		return AgeGapTTLAboveReserve
	}
	return AgeGapNoTimestamp
}

// Evidence gap kinds.
const (
	GapAgeUnknown     = "age_unknown"     // processing records whose staleness cannot be judged
	GapScanIncomplete = "scan_incomplete" // the scan did not cover the keyspace
	GapUndecoded      = "undecoded"       // most records do not decode with the keyspace's schema
	GapNoMatch        = "no_match"        // the pattern matched nothing while the database holds other keys
)

// GapKinds lists the kinds, for metric labels and documentation.
func GapKinds() []string {
	return []string{GapAgeUnknown, GapScanIncomplete, GapUndecoded, GapNoMatch}
}

// Gap is one reason a verdict about a keyspace cannot be backed by the data:
// what is missing, the likely cause, and the fix.
type Gap struct {
	Kind     string `json:"kind"`
	Keyspace string `json:"keyspace"`
	Cause    string `json:"cause,omitempty"` // age_unknown: an AgeGap name
	Records  int64  `json:"records"`
	Message  string `json:"message"` // "cannot judge …: why"
	Fix      string `json:"fix"`
}

// String is the gap in one line: message, then the fix.
func (g Gap) String() string { return units.OneLine(g.Message + "; fix: " + g.Fix) }

// AgesOnly reports whether the gap leaves only age-based verdicts (stale,
// oldest processing) unjudged; every other kind leaves every count in doubt.
func (g Gap) AgesOnly() bool { return g.Kind == GapAgeUnknown }

// ageEvidence is what a keyspace's aggregate keeps to explain its gaps.
type ageEvidence struct {
	gaps       [numAgeGaps]int64
	maxTTLGap  int64 // largest TTL among ttl_above_reserve / no_reserve_ttl records
	undecoded  int64
	reserveTTL time.Duration
	timeout    time.Duration
	retention  time.Duration
	schema     string
}

func (e *ageEvidence) add(r *Record) {
	if g := r.AgeGap(); g != AgeGapNone {
		e.gaps[g]++
		if g == AgeGapTTLAboveReserve || g == AgeGapNoReserveTTL {
			e.maxTTLGap = max(e.maxTTLGap, r.TTLms)
		}
	}
	if r.Flags&(FlagUndecoded|FlagDecodeError) != 0 {
		e.undecoded++
	}
}

// ProposeDuration rounds an observed span up to a value people would
// configure: whole hours from an hour, whole minutes from a minute, else
// whole seconds. A second of slack absorbs libraries that round EX up.
func ProposeDuration(ms int64) time.Duration {
	d := time.Duration(max(ms-1000, 1)) * time.Millisecond
	unit := time.Second
	switch {
	case d > time.Hour:
		unit = time.Hour
	case d > time.Minute:
		unit = time.Minute
	}
	return (d + unit - 1).Truncate(unit)
}

// MatchedNothing reports whether a keyspace's scan was complete and found no
// key: then Gaps needs the database's key count to tell "idle" from "wrong
// pattern".
func (r Report) MatchedNothing() bool {
	keys := map[string]int64{}
	for _, c := range r.Coverage {
		if c.Complete {
			keys[c.Keyspace] += c.Keys
		}
	}
	for _, n := range keys {
		if n == 0 {
			return true
		}
	}
	return false
}

// Gaps lists why verdicts on this report's keyspaces cannot be backed.
// dbKeys is the number of keys in the database (DBSIZE, summed over a
// cluster's primaries), or -1 when unknown: a keyspace that matched nothing
// is a gap only when the database holds keys no keyspace matched.
func (r Report) Gaps(dbKeys int64) []Gap {
	// a cluster scan has a coverage per node: judge each keyspace whole
	var merged []CoverageReport
	at := map[string]int{}
	var scanned int64
	for _, c := range r.Coverage {
		scanned += c.Keys
		i, ok := at[c.Keyspace]
		if !ok {
			at[c.Keyspace] = len(merged)
			merged = append(merged, c)
			continue
		}
		m := &merged[i]
		m.Keys += c.Keys
		m.Records += c.Records
		m.Complete = m.Complete && c.Complete
		m.Limited = m.Limited || c.Limited
		if m.Error == "" {
			m.Error = c.Error
		}
	}
	gaps := []Gap{} // [] in JSON, never null
	for _, c := range merged {
		if g, ok := coverageGap(c, dbKeys-scanned); ok {
			gaps = append(gaps, g)
		}
	}
	for _, k := range r.Keyspaces {
		gaps = append(gaps, k.gaps()...)
	}
	return gaps
}

func coverageGap(c CoverageReport, unmatched int64) (Gap, bool) {
	ks := Sanitize(c.Keyspace)
	switch {
	case !c.Complete:
		why := "the scan stopped early"
		fix := "rerun once the connection is stable, or raise --scan-timeout"
		switch {
		case c.Error != "":
			why = units.OneLine(c.Error)
		case c.Limited:
			why = fmt.Sprintf("stopped at --max-keys after %s keys", units.FormatCount(c.Keys))
			fix = "drop --max-keys (max_keys in the profile) so the scan covers the keyspace"
		}
		return Gap{Kind: GapScanIncomplete, Keyspace: c.Keyspace, Records: c.Records,
			Message: fmt.Sprintf("cannot judge keyspace %s: the scan was incomplete (%s)", ks, why), Fix: fix}, true
	case c.Keys == 0 && unmatched > 0:
		return Gap{Kind: GapNoMatch, Keyspace: c.Keyspace,
			Message: fmt.Sprintf("cannot judge keyspace %s: its pattern %q matched no key, while the database holds %s keys no keyspace matched",
				ks, Sanitize(string(c.Match)), units.FormatCount(unmatched)),
			Fix: "check the keyspace's match (--match) against the keys the application writes: idemctl detect --match '<prefix>*' proposes one"}, true
	}
	return Gap{}, false
}

func (k KeyspaceReport) gaps() []Gap {
	e := k.ev
	if e == nil {
		return nil
	}
	ks := Sanitize(k.Name)
	var gaps []Gap
	if e.undecoded*2 > k.Total {
		gaps = append(gaps, Gap{Kind: GapUndecoded, Keyspace: k.Name, Records: e.undecoded,
			Message: fmt.Sprintf("cannot judge keyspace %s: %s of %s records (%d%%) do not decode as %s",
				ks, units.FormatCount(e.undecoded), units.FormatCount(k.Total), e.undecoded*100/max(k.Total, 1), Sanitize(e.schema)),
			Fix: fmt.Sprintf("the pattern holds another format: run idemctl detect --match %q and use the preset or schema it proposes", Sanitize(string(k.Match)))})
	}
	for g := AgeGap(1); g < numAgeGaps; g++ {
		n := e.gaps[g]
		if n == 0 {
			continue
		}
		gap := Gap{Kind: GapAgeUnknown, Keyspace: k.Name, Cause: g.String(), Records: n}
		head := fmt.Sprintf("cannot judge %s processing %s in %s: ", units.FormatCount(n), plural(n, "record", "records"), ks)
		switch g {
		case AgeGapTTLAboveReserve:
			p := units.ConfigDuration(ProposeDuration(e.maxTTLGap))
			gap.Message = head + fmt.Sprintf("their TTL (up to %s) is above the configured reserve TTL (%s), so reserve TTL − TTL says nothing about their age",
				units.FormatMs(e.maxTTLGap), units.ConfigDuration(e.reserveTTL))
			gap.Fix = fmt.Sprintf("set the reserve TTL the application's reserve step really sets: reserve_ttl: %s on keyspace %s (or --reserve-ttl %s)", p, ks, p)
		case AgeGapNoReserveTTL:
			p := units.ConfigDuration(ProposeDuration(e.maxTTLGap))
			gap.Message = head + "the schema derives age from the TTL, but no reserve TTL is configured"
			gap.Fix = fmt.Sprintf("set reserve_ttl on keyspace %s to the TTL the reserve step sets (the largest seen suggests %s; or --reserve-ttl %s)", ks, p, p)
		case AgeGapNoTTL:
			gap.Message = head + "they have no TTL and no stored timestamp, so nobody can tell a request in flight from one stuck forever"
			gap.Fix = "judge them with --max-processing-no-ttl 0; repair with idemctl scan --flag processing_no_ttl, then idemctl fail or expire; make the reserve step set a TTL"
		case AgeGapTTLUnreadable:
			gap.Message = head + "the server did not return their TTL (PTTL refused or failed)"
			gap.Fix = "allow PTTL for idemctl's user (ACL SETUSER … +pttl) and rescan"
		case AgeGapNoTimestamp:
			gap.Message = head + fmt.Sprintf("schema %s stores no creation time or deadline and does not derive age from the TTL", Sanitize(e.schema))
			gap.Fix = "map the record's creation time (created:) or deadline (deadline:) in the schema, or set age_from_ttl: true with reserve_ttl"
		}
		gaps = append(gaps, gap)
	}
	return gaps
}

func plural(n int64, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// Gaps lists why verdicts on this snapshot cannot be backed, keyspace by
// keyspace.
func (s *Snapshot) Gaps() []Gap {
	var scanned int64
	for _, k := range s.Keyspaces {
		scanned += k.Coverage.Keys
	}
	gaps := []Gap{}
	for _, k := range s.Keyspaces {
		r := k.Report
		if len(r.Coverage) == 0 {
			// never reached: say so from the merged coverage
			r.Coverage = []CoverageReport{{Keyspace: k.Name, Match: Text(k.Coverage.Match), Keys: k.Coverage.Keys,
				Complete: false, Error: errText(coverageErr(k))}}
		}
		// one keyspace's report sees only its own keys: the others were matched
		db := s.DBKeys
		if db >= 0 {
			db -= scanned - k.Coverage.Keys
		}
		gaps = append(gaps, r.Gaps(db)...)
	}
	return gaps
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// DBKeys counts the keys in the selected database (DBSIZE), summed over a
// cluster's primaries: one cheap command per node.
func DBKeys(ctx context.Context, c redis.UniversalClient) (int64, error) {
	cc, ok := c.(*redis.ClusterClient)
	if !ok {
		return c.DBSize(ctx).Result()
	}
	var total atomic.Int64
	err := cc.ForEachMaster(ctx, func(ctx context.Context, n *redis.Client) error {
		v, err := n.DBSize(ctx).Result()
		total.Add(v)
		return err
	})
	return total.Load(), err
}

func (e *ageEvidence) byCause() map[string]int64 {
	m := make(map[string]int64, numAgeGaps-1)
	for g := AgeGap(1); g < numAgeGaps; g++ {
		m[g.String()] = e.gaps[g]
	}
	return m
}
