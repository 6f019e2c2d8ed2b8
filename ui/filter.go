package ui

import (
	"fmt"
	"strings"

	"github.com/idemctl/idemctl/inspect"
)

// filter selects records. The `/` input takes space-separated terms, all of
// which must match:
//
//	customer-42          key contains (case-insensitive)
//	*:POST:/orders:*     key glob (* and ?)
//	principal=customer-4*  a template capture equals (glob)
//	state=processing     canonical state
//	flag=no_ttl          has a flag
//	stale                stale only
type filter struct {
	states [6]bool // hotkey states; none set means all
	stale  bool    // hotkey
	flag   inspect.Flags
	text   string
	terms  []term
}

type termKind uint8

const (
	termSubstring termKind = iota
	termGlob
	termCapture
	termState
	termFlag
	termStale
)

type term struct {
	kind  termKind
	name  string // capture name
	value string // lower-cased for substrings
	state inspect.State
	flag  inspect.Flags
}

// parseFilter compiles the `/` text.
func parseFilter(text string) ([]term, error) {
	var out []term
	for _, w := range strings.Fields(text) {
		name, value, isKV := strings.Cut(w, "=")
		switch {
		case w == "stale":
			out = append(out, term{kind: termStale})
		case isKV && name == "state":
			st, ok := inspect.ParseState(value)
			if !ok {
				return nil, fmt.Errorf("unknown state %q", value)
			}
			out = append(out, term{kind: termState, state: st})
		case isKV && name == "flag":
			f, err := inspect.ParseFlag(value)
			if err != nil {
				return nil, err
			}
			out = append(out, term{kind: termFlag, flag: f})
		case isKV && name != "":
			out = append(out, term{kind: termCapture, name: name, value: value})
		case strings.ContainsAny(w, "*?"):
			out = append(out, term{kind: termGlob, value: w})
		default:
			out = append(out, term{kind: termSubstring, value: strings.ToLower(w)})
		}
	}
	return out, nil
}

func (f *filter) anyState() bool {
	for _, on := range f.states {
		if on {
			return true
		}
	}
	return false
}

// active reports whether anything is filtered.
func (f *filter) active() bool {
	return f.anyState() || f.stale || f.flag != 0 || len(f.terms) > 0
}

func (f *filter) keep(r *inspect.Record) bool {
	if f.anyState() && !f.states[r.State] {
		return false
	}
	if f.stale && !r.Stale() {
		return false
	}
	if f.flag != 0 && !r.Flags.Has(f.flag) {
		return false
	}
	for i := range f.terms {
		if !f.terms[i].match(r) {
			return false
		}
	}
	return true
}

func (t *term) match(r *inspect.Record) bool {
	switch t.kind {
	case termStale:
		return r.Stale()
	case termState:
		return r.State == t.state
	case termFlag:
		return r.Flags.Has(t.flag)
	case termCapture:
		return globMatch(t.value, r.Group(t.name))
	case termGlob:
		return globMatch(t.value, r.Key)
	default:
		return containsFold(r.Key, t.value)
	}
}

// describe renders the active filter for the status line.
func (f *filter) describe() string {
	var parts []string
	if f.anyState() {
		var st []string
		for i, on := range f.states {
			if on {
				st = append(st, inspect.State(i).String())
			}
		}
		parts = append(parts, "state="+strings.Join(st, ","))
	}
	if f.stale {
		parts = append(parts, "stale")
	}
	if f.flag != 0 {
		parts = append(parts, "flag="+f.flag.String())
	}
	if f.text != "" {
		parts = append(parts, inspect.Sanitize(f.text))
	}
	return strings.Join(parts, " ")
}

// containsFold is a case-insensitive substring test; sub is lower case.
func containsFold(s, sub string) bool {
	if sub == "" {
		return true
	}
	if isASCIILower(s) {
		return strings.Contains(s, sub)
	}
	return strings.Contains(strings.ToLower(s), sub)
}

func isASCIILower(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 'A' && c <= 'Z' || c >= 0x80 {
			return false
		}
	}
	return true
}

// globMatch matches * (any run) and ? (one byte), iteratively so hostile
// keys cannot blow the stack.
func globMatch(pattern, s string) bool {
	p, i := 0, 0
	star, mark := -1, 0
	for i < len(s) {
		switch {
		case p < len(pattern) && (pattern[p] == '?' || pattern[p] == s[i]):
			p++
			i++
		case p < len(pattern) && pattern[p] == '*':
			star, mark = p, i
			p++
		case star >= 0:
			p = star + 1
			mark++
			i = mark
		default:
			return false
		}
	}
	for p < len(pattern) && pattern[p] == '*' {
		p++
	}
	return p == len(pattern)
}
