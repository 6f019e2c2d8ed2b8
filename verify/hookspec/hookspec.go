// Package hookspec holds the rules of a verify hook as written: what its
// command may name, and the bounds of its timeout, concurrency and
// environment. The config checks a file against them and verify runs
// hooks by them, so neither needs the other.
//
// Floor 1 of ARCHITECTURE.md, beside the read engine: it imports inspect
// (what a name may be) and nothing above.
package hookspec

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/idemctl/idemctl/inspect/keytemplate"
)

// Defaults and bounds of a hook's settings.
const (
	DefaultTimeout     = 5 * time.Second
	MaxTimeout         = 10 * time.Minute
	DefaultConcurrency = 4
	MaxConcurrency     = 64
)

// Builtins are the placeholders every record has.
var Builtins = []string{"key", "keyspace", "fingerprint", "state"}

// EntryBuiltins are the placeholders every pending stream entry has; any
// other name is one of the entry's fields.
var EntryBuiltins = []string{"stream", "group", "id", "consumer", "deliveries"}

// Spec is a hook as written.
type Spec struct {
	Command     []string
	Timeout     time.Duration
	Concurrency int
	Env         []string // NAME=value
}

// Check validates the hook against the placeholder names it may use: a
// command, no placeholder in the executable, only known placeholders, and
// settings within bounds.
func (s Spec) Check(names []string) error {
	if len(s.Command) == 0 || strings.TrimSpace(s.Command[0]) == "" {
		return errors.New("command is empty: give the executable and its arguments, e.g. [./verify-orders, \"{idem_key}\"]")
	}
	if strings.ContainsAny(s.Command[0], "{}") {
		return fmt.Errorf("command: the executable %q cannot hold a placeholder", s.Command[0])
	}
	known := map[string]bool{}
	for _, n := range names {
		known[n] = true
	}
	for i, arg := range s.Command[1:] {
		for _, n := range Placeholders(arg) {
			if !known[n] {
				have := append([]string{}, names...)
				sort.Strings(have)
				return fmt.Errorf("command argument %d: unknown placeholder {%s} (have: {%s})", i+1, n, strings.Join(have, "}, {"))
			}
		}
	}
	return s.checkSettings()
}

// CheckRecord is Check for a record keyspace's hook: the builtins and the
// key template's captures.
func (s Spec) CheckRecord(captures []string) error {
	return s.Check(append(append([]string{}, Builtins...), captures...))
}

// CheckEntry is Check for a stream keyspace's hook: its placeholders are
// the entry's builtins and field names, which only the entry knows, so
// any name goes (a field the entry lacks makes that entry's verdict
// unknown, not the config wrong).
func (s Spec) CheckEntry() error {
	if len(s.Command) == 0 || strings.TrimSpace(s.Command[0]) == "" {
		return errors.New("command is empty: give the executable and its arguments, e.g. [./verify-payment, \"{event_id}\"]")
	}
	return s.CheckRecord(s.EntryNames())
}

// EntryNames is every placeholder the command names, as if all were known.
func (s Spec) EntryNames() []string {
	names := append([]string{}, EntryBuiltins...)
	for _, arg := range s.Command[1:] {
		names = append(names, Placeholders(arg)...)
	}
	return names
}

func (s Spec) checkSettings() error {
	if s.Timeout < 0 || s.Timeout > MaxTimeout {
		return fmt.Errorf("timeout %s: want more than 0 and at most %s", s.Timeout, MaxTimeout)
	}
	if s.Concurrency < 0 || s.Concurrency > MaxConcurrency {
		return fmt.Errorf("concurrency %d: want 1 to %d", s.Concurrency, MaxConcurrency)
	}
	for _, e := range s.Env {
		if name, _, ok := strings.Cut(e, "="); !ok || name == "" {
			return fmt.Errorf("env %q: want NAME=value", e)
		}
	}
	return nil
}

// Placeholders lists the {name} references in arg, names made of letters,
// digits and underscores (so JSON such as {"a":1} is left as text).
func Placeholders(arg string) []string {
	var out []string
	for rest := arg; ; {
		i := strings.IndexByte(rest, '{')
		if i < 0 {
			return out
		}
		j := strings.IndexByte(rest[i:], '}')
		if j < 0 {
			return out
		}
		if name := rest[i+1 : i+j]; keytemplate.ValidName(name) {
			out = append(out, name)
			rest = rest[i+j+1:]
			continue
		}
		rest = rest[i+1:]
	}
}
