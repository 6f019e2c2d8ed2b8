package ui

import (
	"fmt"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/internal/units"
)

// How the Detail screen lays a value out and explains a record's TTL, age
// and staleness.

// hang writes prefix then value wrapped to width, continuation lines
// starting under the value's first character, never under the label. Each
// line is wrapped once, here. Too narrow for that, the whole line wraps.
func hang(prefix, value string, width int) string {
	const breaks = " /:,"
	pw := ansi.StringWidth(prefix)
	if pw+ansi.StringWidth(value) <= width {
		return prefix + value
	}
	if width-pw < 12 {
		return ansi.Wrap(prefix+value, width, breaks)
	}
	lines := strings.Split(ansi.Wrap(value, width-pw, breaks), "\n")
	pad := strings.Repeat(" ", pw)
	for i := 1; i < len(lines); i++ {
		lines[i] = pad + strings.TrimLeft(lines[i], " ")
	}
	return prefix + strings.Join(lines, "\n")
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func liveTTL(ttl int64, elapsed time.Duration) string {
	switch {
	case ttl == -1:
		return "none — this key never expires"
	case ttl < 0:
		return "unknown (PTTL could not be read)"
	}
	left := ttl - elapsed.Milliseconds()
	if left <= 0 {
		return "expired (refetch with r)"
	}
	return units.FormatMs(left) + " left"
}

// ageExplain says how old the record is and how that was derived.
func ageExplain(r *inspect.Record, ks *inspect.Keyspace, elapsed time.Duration) string {
	if r.AgeMs < 0 {
		switch {
		case r.State != inspect.StateProcessing && ks.Schema.AgeFromTTL:
			return "unknown: the TTL was reset when the record completed, and no timestamp is stored"
		case r.TTLms == -1:
			return "unknown: no TTL to derive it from and no timestamp stored"
		case r.AgeGap() == inspect.AgeGapTTLAboveReserve:
			return fmt.Sprintf("unknown: its TTL (%s) is above the configured reserve TTL (%s), so the application reserves with a longer one: set reserve_ttl to it (idemctl doctor proposes a value)",
				units.FormatMs(r.TTLms), units.FormatMs(ks.ReserveTTL.Milliseconds()))
		default:
			return "unknown: no timestamp stored and the TTL does not reveal it"
		}
	}
	age := units.FormatMs(r.AgeMs + elapsed.Milliseconds())
	switch r.AgeSource {
	case inspect.AgeTTL:
		return fmt.Sprintf("%s — from the TTL: reserve TTL %s − remaining TTL %s at read (the reserve step sets the TTL and stores no timestamp)",
			age, units.FormatMs(ks.ReserveTTL.Milliseconds()), units.FormatMs(r.TTLms))
	case inspect.AgeField:
		return age + " — from the record's creation timestamp, against the Redis server's clock"
	case inspect.AgeDeadline:
		return fmt.Sprintf("%s — from the stored deadline: processing timeout %s − time left to the deadline",
			age, units.FormatMs(ks.ProcessingTimeout.Milliseconds()))
	}
	return age
}

func staleExplain(r *inspect.Record, ks *inspect.Keyspace, elapsed time.Duration) string {
	timeout := units.FormatMs(ks.ProcessingTimeout.Milliseconds())
	switch {
	case r.Stale() && r.DeadlineMs > 0:
		return "yes: its processing deadline has passed — the worker probably crashed before completing"
	case r.Stale():
		return fmt.Sprintf("yes: processing for %s, longer than the processing timeout %s — the worker probably crashed after RESERVE; check the source of truth, then force-fail or reconcile",
			units.FormatMs(r.AgeMs+elapsed.Milliseconds()), timeout)
	case r.Flags.Has(inspect.FlagProcessingNoTTL):
		return "cannot tell its age, but it has no TTL: every retry is blocked until someone repairs it"
	case r.AgeMs < 0:
		return "unknown: its age cannot be derived"
	case ks.ProcessingTimeout <= 0:
		return "no processing timeout configured for this keyspace"
	}
	return fmt.Sprintf("no: %s old, within the processing timeout %s", units.FormatMs(r.AgeMs+elapsed.Milliseconds()), timeout)
}
