package reaper

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/idemctl/idemctl/config"
	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/inspect/filter"
)

// Bad policies are refused in one line that names the line and the key.
func TestPolicyErrors(t *testing.T) {
	for _, tc := range []struct{ doc, want string }{
		{"", "empty"},
		{"name: x\n", "line 1: rules"},
		{"name: 'a b'\nrules: []\n", "line 1: name"},
		{"name: x\nrulez: []\n", `line 2: unknown setting "rulez"`},
		{"name: x\ncycle_deadline: 10s\nlease: {ttl: 5s}\nrules: [{keyspace: a}]\n", "line 3: lease.ttl 5s: want at least 2× cycle_deadline (20s)"},
		{"name: x\nrules:\n  - keyspace: a\n    max_per_cycle: 1\n", "line 3: rules[a]: action: missing"},
		{"name: x\nrules:\n  - keyspace: a\n    action: nuke\n", "line 4: rules[a]: action \"nuke\""},
		{"name: x\nrules:\n  - keyspace: a\n    action: expire\n", "line 3: rules[a]: ttl: required for expire"},
		{"name: x\nrules:\n  - keyspace: a\n    action: fail\n    select:\n      states: [zombie]\n", "line 6: rules[a]: select.states"},
		{"name: x\nrules:\n  - keyspace: a\n    action: fail\n    select: {flags: [stael]}\n", "line 5: rules[a]: select.flags: unknown flag \"stael\""},
		{"name: x\nrules:\n  - keyspace: a\n    action: fail\n    select: {verdict: maybe}\n", "line 5: rules[a]: select.verdict"},
		{"name: x\nrules:\n  - keyspace: a\n    action: reconcile-if-verified\n    select: {verdict: not_done}\n", "reconcile-if-verified acts on a done verdict only"},
		{"name: x\nrules:\n  - keyspace: a\n    action: fail\n    max_per_cycle: 5\n    per_hour: 10\n", "line 3: rules[a]: breaker: want a positive number"},
		{"name: x\nrules:\n  - keyspace: a\n    action: fail\n    max_per_cycle: 5\n    per_hour: 10\n    breaker: 2\n", "line 5: rules[a]: max_per_cycle 5 is above breaker 2"},
		{"name: x\nrules:\n  - keyspace: a\n    action: fail\n    max_per_cycle: -1\n", "line 5: rules[a]: max_per_cycle: want a positive number"},
		{"name: x\nrules:\n  - keyspace: a\n    action: fail\n    max_per_cycle: lots\n", "line 5"},
		{"name: x\ncycle_deadline: 5s\nrules:\n  - keyspace: a\n    action: fail\n    max_per_cycle: 500\n    per_hour: 1000\n    breaker: 1000\n", "line 4: rules[a]: max_per_cycle 500 at rate 50 a second takes 10s, longer than cycle_deadline 5s"},
	} {
		_, err := Parse([]byte(tc.doc))
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: got %v, want %q", tc.doc, err, tc.want)
		}
		if err != nil && (strings.Contains(err.Error(), "reaper.") || strings.Contains(err.Error(), "int64") || strings.Contains(err.Error(), "!!")) {
			t.Errorf("%q: Go type names in %q", tc.doc, err)
		}
	}
}

// Defaults, and the checks against the keyspace's schema.
func TestPolicyDefaultsAndBind(t *testing.T) {
	p, err := Parse([]byte(basePolicy))
	if err != nil {
		t.Fatal(err)
	}
	r := p.Rules[0]
	if p.LeaseKey != "idemctl:reap:lease:test" || p.LeaseTTL != 20*time.Second || p.Rate != DefaultRate || p.Actor() != "reaper/test" ||
		r.States != filter.StatesOf(inspect.StateProcessing) || r.Action != ActFail {
		t.Errorf("defaults: %+v %+v", p, r)
	}
	ks := jobKeyspace(t)
	noLock := *ks
	schema := *ks.Schema
	schema.Lock, schema.Deadline = nil, nil
	noLock.Schema = &schema
	for _, tc := range []struct {
		sel, want string
		ks        *inspect.Keyspace
		verifier  bool
	}{
		{"{lock_absent: true}", "select.lock_absent: schema job has no lock companion", &noLock, false},
		{"{deadline_passed: true}", "select.deadline_passed: schema job stores no deadline", &noLock, false},
		{"{verdict: not_done}", "keyspace jobs has no verify: hook", ks, false},
		{"{verdict: not_done}", "", ks, true},
		{"{lock_absent: true, deadline_passed: true}", "", ks, false},
	} {
		p, err := Parse([]byte(strings.Replace(basePolicy, "action: fail", "action: fail\n    select: "+tc.sel, 1)))
		if err != nil {
			t.Fatal(err)
		}
		err = p.Bind(func(string) (*inspect.Keyspace, error) { return tc.ks, nil }, func(*inspect.Keyspace) bool { return tc.verifier })
		if (err == nil) != (tc.want == "") || err != nil && !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want %q", tc.sel, err, tc.want)
		}
	}
}

// The documented example policy is valid against the example config.
func TestExamplePolicy(t *testing.T) {
	cfg, err := config.Load("../config.example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	p, err := Load("../examples/reap-policy.yaml")
	if err != nil {
		t.Fatal(err)
	}
	err = p.Bind(cfg.Keyspace, func(ks *inspect.Keyspace) bool { return cfg.VerifyHook(ks.Name) != nil })
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Rules) != 3 || p.Rules[0].Verdict != VerdictDone || p.Rules[1].Verdict != VerdictNotDone || p.Rules[2].TTL.D != 0 {
		t.Errorf("example policy: %+v", p.Rules)
	}
}

// A report quotes the server's errors on one line, never with a raw
// control character (the CLI prints notes and errors as they are).
func TestReportErrorsAreSafeToPrint(t *testing.T) {
	got := said(errors.New("ERR boom\x1b]0;owned\x07\nsecond line"))
	if strings.ContainsAny(got, "\x1b\x07\n") || !strings.Contains(got, `ERR boom\x1b]0;owned\x07 second line`) {
		t.Fatalf("said: %q", got)
	}
}
