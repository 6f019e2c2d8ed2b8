// Package filter selects records: by state, flag and keyspace (Filter),
// and by a search of their keys and captures (Search), for the screens'
// find and the commands' --state, --flag and --search.
//
// Floor 1 of ARCHITECTURE.md, the read engine: it may import inspect and
// the foundations.
package filter

import (
	"fmt"
	"strings"

	"github.com/idemctl/idemctl/inspect"
)

// Filter selects records: a record passes when it meets every criterion
// set. The zero Filter passes everything. The CLI builds one from --state,
// --stale and --flag; the TUI from its hotkeys and the `/` search.
type Filter struct {
	States StateSet      // any of these states; empty: every state
	Stale  bool          // stale processing records only
	Flags  inspect.Flags // all of these flags
	Search Search        // the user's search terms, all of which must match
}

// Active reports whether anything is filtered out.
func (f *Filter) Active() bool {
	return f.States != 0 || f.Stale || f.Flags != 0 || len(f.Search.terms) > 0
}

// Match reports whether r passes the filter. It allocates nothing for
// ASCII keys: it runs on every record of a 1M-record view.
func (f *Filter) Match(r *inspect.Record) bool {
	if f.States != 0 && !f.States.Has(r.State) {
		return false
	}
	if f.Stale && !r.Stale() {
		return false
	}
	if !r.Flags.Has(f.Flags) {
		return false
	}
	return f.Search.Match(r)
}

// String renders the active criteria in the user's terms, for a status line.
func (f *Filter) String() string {
	var parts []string
	if f.States != 0 {
		parts = append(parts, "state="+f.States.String())
	}
	if f.Stale {
		parts = append(parts, "stale")
	}
	if f.Flags != 0 {
		parts = append(parts, "flag="+f.Flags.String())
	}
	if f.Search.text != "" {
		parts = append(parts, inspect.Sanitize(f.Search.text))
	}
	return strings.Join(parts, " ")
}

// StateSet is a set of canonical states.
type StateSet uint8

// StatesOf makes a set of the given states.
func StatesOf(states ...inspect.State) StateSet {
	var s StateSet
	for _, st := range states {
		s |= 1 << st
	}
	return s
}

// Has reports whether st is in the set.
func (s StateSet) Has(st inspect.State) bool { return s&(1<<st) != 0 }

// String lists the states' names, comma-separated.
func (s StateSet) String() string {
	var names []string
	for st := inspect.StateUnknown; st <= inspect.StateExpired; st++ {
		if s.Has(st) {
			names = append(names, st.String())
		}
	}
	return strings.Join(names, ",")
}

// ParseStates reads state names (any case, surrounding spaces ignored).
func ParseStates(names []string) (StateSet, error) {
	var s StateSet
	if err := parseEach(names, parseStateName, func(st inspect.State) { s |= StatesOf(st) }); err != nil {
		return 0, err
	}
	return s, nil
}

func parseStateName(name string) (inspect.State, error) {
	st, ok := inspect.ParseState(name)
	if !ok {
		return 0, fmt.Errorf("unknown state %q (want processing, succeeded, failed, reconciled, expired or unknown)", name)
	}
	return st, nil
}

// ParseFlags reads flag names (surrounding spaces ignored) into one set.
func ParseFlags(names []string) (inspect.Flags, error) {
	var fs inspect.Flags
	if err := parseEach(names, inspect.ParseFlag, func(f inspect.Flags) { fs |= f }); err != nil {
		return 0, err
	}
	return fs, nil
}

// parseEach parses every name, trimmed, stopping at the first error.
func parseEach[T any](names []string, parse func(string) (T, error), add func(T)) error {
	for _, n := range names {
		v, err := parse(strings.TrimSpace(n))
		if err != nil {
			return err
		}
		add(v)
	}
	return nil
}
