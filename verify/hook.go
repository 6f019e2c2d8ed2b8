package verify

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/inspect/keytemplate"
	"github.com/idemctl/idemctl/verify/hookspec"
)

// Hook is a keyspace's verifier, from its config.
type Hook struct {
	// Command is the executable and its arguments. An argument may hold
	// placeholders, each replaced by the record's text: {key}, {keyspace},
	// {fingerprint}, {state} and the keyspace template's captures by name.
	// Nothing goes through a shell: a record's text only ever lands inside
	// the one argument that names it.
	Command     []string
	Timeout     time.Duration // per run; 0: DefaultTimeout
	Concurrency int           // runs at a time; 0: DefaultConcurrency
	// Env is added to the inherited environment (NAME=value).
	Env []string
	// Builtin, when set, answers in place of running Command: a source of
	// truth the program carries (the demo's orders), which prints the
	// same JSON verdict a hook prints and is read by the same parser.
	// Command[0] then only names it.
	Builtin func(ctx context.Context, rec *inspect.Record) []byte
}

// Defaults and bounds of a hook's settings (verify/hookspec holds the
// rules, which the config checks a file against).
const (
	DefaultTimeout     = hookspec.DefaultTimeout
	MaxTimeout         = hookspec.MaxTimeout
	DefaultConcurrency = hookspec.DefaultConcurrency
	MaxConcurrency     = hookspec.MaxConcurrency
)

// spec is the hook as written, for hookspec's rules.
func (h Hook) spec() hookspec.Spec {
	return hookspec.Spec{Command: h.Command, Timeout: h.Timeout, Concurrency: h.Concurrency, Env: h.Env}
}

// Check validates the hook against the keyspace's capture names: a
// command, no placeholder in the executable, and only known placeholders.
func (h Hook) Check(captures []string) error { return h.spec().CheckRecord(captures) }

// placeholders lists the {name} references in arg.
func placeholders(arg string) []string { return hookspec.Placeholders(arg) }

// args fills the placeholders from rec. A value that cannot be an
// argument (a NUL byte) is an error naming the placeholder.
func (h Hook) args(rec *inspect.Record) ([]string, error) {
	return h.fill(func(name string) (string, error) {
		switch name {
		case "key":
			return rec.Key, nil
		case "keyspace":
			if rec.Keyspace != nil {
				return rec.Keyspace.Name, nil
			}
			return "", nil
		case "fingerprint":
			return rec.Fingerprint, nil
		case "state":
			return rec.RawState, nil
		}
		return rec.Group(name), nil
	})
}

// fill replaces each argument's placeholders by what value says of them;
// value's error, or a NUL byte, stops it naming the placeholder.
func (h Hook) fill(value func(name string) (string, error)) ([]string, error) {
	out := make([]string, len(h.Command))
	out[0] = h.Command[0]
	for i, arg := range h.Command[1:] {
		var b strings.Builder
		rest := arg
		for {
			i := strings.IndexByte(rest, '{')
			j := -1
			if i >= 0 {
				j = strings.IndexByte(rest[i:], '}')
			}
			if i < 0 || j < 0 {
				b.WriteString(rest)
				break
			}
			name := rest[i+1 : i+j]
			if !keytemplate.ValidName(name) {
				b.WriteString(rest[:i+1])
				rest = rest[i+1:]
				continue
			}
			v, err := value(name)
			if err != nil {
				return nil, fmt.Errorf("{%s}: %v", name, err)
			}
			if strings.IndexByte(v, 0) >= 0 {
				return nil, fmt.Errorf("{%s} holds a NUL byte, which cannot be passed as an argument", name)
			}
			b.WriteString(rest[:i])
			b.WriteString(v)
			rest = rest[i+j+1:]
		}
		out[i+1] = b.String()
	}
	return out, nil
}

// Verify runs the hook for one record. It never runs on a record that is
// not processing, and any failure of the hook is an unknown verdict with
// the reason: it never returns an error.
func (h Hook) Verify(ctx context.Context, rec *inspect.Record) Result {
	start := time.Now()
	r := h.verify(ctx, rec)
	r.Took = time.Since(start)
	return r
}

func (h Hook) verify(ctx context.Context, rec *inspect.Record) Result {
	if rec == nil {
		return unknown("no record")
	}
	if rec.State != inspect.StateProcessing {
		return unknown("the record is %s, not processing: hooks run only on processing records", rec.State)
	}
	if len(h.Command) == 0 {
		return unknown("keyspace %s has no verify hook (keyspaces[].verify in the config)", keyspaceName(rec))
	}
	if h.Builtin != nil {
		return parseOutput(h.Builtin(ctx, rec))
	}
	argv, err := h.args(rec)
	if err != nil {
		return unknown("the hook was not run: %v", err)
	}
	return h.run(ctx, argv)
}

func keyspaceName(rec *inspect.Record) string {
	if rec.Keyspace == nil {
		return "(none)"
	}
	return rec.Keyspace.Name
}

// VerifyAll runs the hook for each record, at most Concurrency at a time,
// and calls fn (serially, in completion order) with each result. It
// returns when every run has ended; a cancelled ctx gives the runs not
// started an unknown verdict saying so.
func (h Hook) VerifyAll(ctx context.Context, recs []*inspect.Record, fn func(i int, r Result)) {
	n := h.Concurrency
	if n <= 0 {
		n = DefaultConcurrency
	}
	var mu sync.Mutex
	report := func(i int, r Result) {
		mu.Lock()
		defer mu.Unlock()
		fn(i, r)
	}
	sem := make(chan struct{}, n)
	var wg sync.WaitGroup
	for i, rec := range recs {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			report(i, unknown("not verified: interrupted"))
			continue
		}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			report(i, h.Verify(ctx, rec))
		}()
	}
	wg.Wait()
}

// FromSpec is the hook a config wrote, ready to run (nil for none).
func FromSpec(s *hookspec.Spec) *Hook {
	if s == nil {
		return nil
	}
	return &Hook{Command: s.Command, Timeout: s.Timeout, Concurrency: s.Concurrency, Env: s.Env}
}
