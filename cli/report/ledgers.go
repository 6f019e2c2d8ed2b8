package report

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/inspect/ledger"
	"github.com/idemctl/idemctl/internal/units"
)

// Ledgers prints each ledger's aggregate, then its oldest keys.
func Ledgers(w io.Writer, reps []ledger.Report, top int) {
	for i, r := range reps {
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "ledger %s (%s, match %q, window %s)\n", inspect.Sanitize(r.Name), r.Shape, inspect.Sanitize(r.Match), units.ConfigDuration(time.Duration(r.WindowMs)*time.Millisecond))
		fmt.Fprintf(w, "  keys %s  members %s  memory %s  oldest %s  newest %s  past window %s\n",
			units.FormatCount(r.Keys), units.FormatCount(r.Members), units.FormatBytes(r.MemoryBytes),
			ageText(r.AgeKnown > 0, r.OldestAgeMs), ageText(r.AgeKnown > 0, r.NewestAgeMs), units.FormatCount(r.PastWindow))
		var bands []string
		for _, b := range r.Bands {
			bands = append(bands, fmt.Sprintf(">%d× %s", b.Windows, units.FormatCount(b.Entries)))
		}
		fmt.Fprintf(w, "  entries older than the window: %s\n", strings.Join(bands, "  "))
		if notes := ledgerNotes(&r); len(notes) > 0 {
			fmt.Fprintf(w, "  %s\n", strings.Join(notes, "; "))
		}
		writeLedgerKeys(w, r.Details[:min(top, len(r.Details))])
		if more := r.Keys - int64(min(top, len(r.Details))); more > 0 {
			fmt.Fprintf(w, "  … %s more keys (--top, -o json)\n", units.FormatCount(more))
		}
	}
}

func writeLedgerKeys(w io.Writer, keys []ledger.Key) {
	if len(keys) == 0 {
		return
	}
	fmt.Fprintf(w, "  %-4s %10s %8s %8s %8s %10s %s\n", "TYPE", "MEMBERS", "OLDEST", "TTL", "MEMORY", "PAST", "KEY")
	for _, k := range keys {
		fmt.Fprintf(w, "  %-4s %10s %8s %8s %8s %10s %s\n", k.Type, units.FormatCount(k.Members), ageText(k.AgeKnown, k.OldestAgeMs),
			units.FormatTTL(k.TTLms), units.FormatBytes(k.MemoryBytes), units.FormatCount(k.PastWindow), inspect.Sanitize(k.Key))
	}
}

func ageText(known bool, ms int64) string {
	if !known {
		return "?"
	}
	return units.FormatMs(ms)
}

// ledgerNotes names what the aggregate cannot date or what never expires.
func ledgerNotes(r *ledger.Report) []string {
	var out []string
	for _, n := range []struct {
		v    int64
		text string
	}{
		{r.NoTTL, "period sets without a TTL"}, {r.PeriodsPast, "period sets older than the window"},
		{r.NoPeriod, "sets whose name gives no period"}, {r.NotTimes, "zsets whose scores are not epoch times"},
		{r.Keys - r.MemoryKnown, "keys whose memory is unknown"},
	} {
		if n.v > 0 {
			out = append(out, units.FormatCount(n.v)+" "+n.text)
		}
	}
	if r.Truncated {
		out = append(out, fmt.Sprintf("keys listed: the %d oldest", ledger.DetailCap))
	}
	return out
}

// LedgerProposal is detect's text for keys that are a dedupe ledger.
func LedgerProposal(w io.Writer, p *ledger.Proposal) {
	if p == nil {
		return
	}
	fmt.Fprintf(w, "✓ %-20s a dedupe ledger (kind: ledger; read it with idemctl ledgers)\n", p.Preset)
	for _, e := range p.Evidence {
		fmt.Fprintf(w, "      %s\n", inspect.Sanitize(e))
	}
}
