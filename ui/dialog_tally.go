package ui

import (
	"fmt"
	"slices"
	"strings"

	"github.com/idemctl/idemctl/actions"
	"github.com/idemctl/idemctl/actions/write"
	"github.com/idemctl/idemctl/internal/units"
)

// The run's summary: each planned write counted once, by outcome and
// cause, so its numbers add up to the preview's.

// runTally accounts for every target of a bulk write so the numbers add up
// to the preview's: the writes it planned (applied, not applied by cause,
// not attempted) plus the records it already said were not writable.
type runTally struct {
	records, writes, attempted, applied int
	byCause                             []actions.Tally // attempted planned writes that did not apply, by cause (writeCauses' index)
	notReplicated                       int             // applied, but the replicas did not acknowledge them in time
	notAttempted                        int             // planned writes a cancel stopped (or still to go)
	stopped                             bool            // the run stopped itself (the audit log failed): not a cancel
	refused                             actions.Tally   // not writable at the preview, by outcome
	entries                             bool            // the writes are on pending entries: the causes say so
}

// A writeCause is why attempted writes did not apply, as the run's
// summary names it: one line per distinct cause (one clause when there is
// one), so a count never borrows another cause's words. A result's cause
// is the first row that matches it; one that none matches is counted by
// its outcome alone, and the notes under the summary give its detail. A
// new cause (a write the replicas did not acknowledge) is one more row.
type writeCause struct {
	why string
	is  func(actions.Result) bool
}

var writeCauses = []writeCause{
	{"the record changed since the preview", outcomeIs(write.Conflict, write.NotFound)},
	{"NOPERM: the server's ACL does not let this Redis user write", refusedWith(aclRefusal)},
	{"refused by policy", refusedWith(policyRefusal)},
	{"the audit log could not be written", refusedWith(func(d string) bool { return strings.HasPrefix(d, "not written: ") })},
	{"the record's version could not be read, so the write could not be guarded",
		refusedWith(func(d string) bool { return strings.HasPrefix(d, "the record's version could not be read") })},
	{"a server error", outcomeIs(write.Failed)},
	{"uncertain, and a re-read shows it did not happen", outcomeIs(write.NotApplied)},
	{"uncertain: check the record by hand", outcomeIs(write.Unknown)},
}

func outcomeIs(outs ...write.Outcome) func(actions.Result) bool {
	return func(r actions.Result) bool { return slices.Contains(outs, r.Outcome) }
}

// refusedWith matches a write refused (nothing written) for the reason
// its detail gives.
func refusedWith(detail func(string) bool) func(actions.Result) bool {
	return func(r actions.Result) bool { return r.Outcome == write.Refused && detail(r.Detail) }
}

// aclRefusal recognises the server's ACL in a refusal, as the executor
// words it (actions' explain): NOPERM for a command or key the user may
// not use, or a script's call refused on the user's behalf (Redis, then
// Valkey 8). The detail may lead with why the write stopped ("the
// record's version could not be read…: NOPERM …").
func aclRefusal(d string) bool {
	return strings.Contains(d, "NOPERM") || strings.Contains(d, "The user executing the script can't run this command") ||
		strings.Contains(d, "ACL failure in script")
}

// policyRefusal recognises the session's write policy in a refusal.
func policyRefusal(d string) bool {
	return d == actions.ErrReadOnly.Error() || d == actions.ErrNeedsProfileName.Error() ||
		strings.HasPrefix(d, "no audit log: ")
}

// causeOf is the index in writeCauses of why r did not apply;
// len(writeCauses) when no row matches.
func causeOf(r actions.Result) int {
	for i, c := range writeCauses {
		if c.is(r) {
			return i
		}
	}
	return len(writeCauses)
}

func (d *dialog) tally() runTally {
	t := runTally{records: len(d.plans), byCause: make([]actions.Tally, len(writeCauses)+1), refused: actions.Tally{}, entries: d.wroteEntries()}
	for i, p := range d.plans {
		if p.Refused != "" {
			t.refused[p.Outcome]++
			continue
		}
		t.writes++
		r := d.results[i]
		switch {
		case i >= d.done || r.Outcome == write.Skipped:
			t.notAttempted++
			t.stopped = t.stopped || strings.HasPrefix(r.Detail, "not written: the run stopped")
		case r.Outcome == write.Applied:
			t.attempted++
			t.applied++
			if r.Unreplicated() {
				t.notReplicated++
			}
		default:
			t.attempted++
			c := causeOf(r)
			if t.byCause[c] == nil {
				t.byCause[c] = actions.Tally{}
			}
			t.byCause[c][r.Outcome]++
		}
	}
	return t
}

// String says what happened to each planned write and why a count moved
// from the preview's; done says whether the run is over. The writes that
// did not apply are counted with their cause: in the first line when they
// share one, else a line per cause under it.
func (t runTally) String(done bool) string {
	var causes []string
	for i, n := range t.byCause {
		s := n.String()
		switch {
		case s == "":
			continue
		case i < len(writeCauses) && t.entries:
			s += " (" + strings.Replace(writeCauses[i].why, "record", "entry", 1) + ")"
		case i < len(writeCauses):
			s += " (" + writeCauses[i].why + ")"
		}
		causes = append(causes, s)
	}
	applied := units.FormatCount(int64(t.applied)) + " applied"
	if t.notReplicated > 0 {
		applied += " (" + units.FormatCount(int64(t.notReplicated)) + " NOT REPLICATED: a failover now could take them back)"
	}
	parts := []string{applied}
	switch len(causes) {
	case 0:
	case 1:
		parts = append(parts, causes[0])
	default:
		parts = append(parts, units.FormatCount(int64(t.attempted-t.applied))+" did not apply")
	}
	if t.notAttempted > 0 {
		why := "still to go"
		switch {
		case done && t.stopped:
			why = "not attempted: the run stopped (the audit log could not be written)"
		case done:
			why = "not attempted: cancelled"
		}
		parts = append(parts, units.FormatCount(int64(t.notAttempted))+" "+why)
	}
	out := fmt.Sprintf("%s of %s planned writes: %s", units.FormatCount(int64(t.attempted)), units.FormatCount(int64(t.writes)), strings.Join(parts, " · "))
	if len(causes) > 1 {
		out += "\n  · " + strings.Join(causes, "\n  · ")
	}
	if s := t.refused.String(); s != "" {
		out += fmt.Sprintf("\n%s not writable, as the preview said (%s)", units.FormatCount(int64(t.records-t.writes)), s)
	}
	return out
}
