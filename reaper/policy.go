// Package reaper repairs orphaned idempotency records unattended, under a
// policy file: per keyspace, which records qualify and what to do with
// them, within a per-cycle cap, an hourly budget and a circuit breaker, and
// only while holding a leader lease in Redis, so two copies never act
// together. Every write goes through the actions executor (a guarded
// compare-and-set, audited). It holds no UI code.
//
// Floor 4 of ARCHITECTURE.md: it may import floors 0–3 (foundations, engine,
// writes and rules, hooks), never the command layer.
package reaper

import (
	"errors"
	"fmt"
	"io/fs"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/idemctl/idemctl/actions"
	"github.com/idemctl/idemctl/actions/write"
	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/inspect/filter"
	"github.com/idemctl/idemctl/internal/safefile"
	"github.com/idemctl/idemctl/internal/units"
	"github.com/idemctl/idemctl/internal/yamldoc"
	"github.com/idemctl/idemctl/verify"
)

// Action is what a rule does to the records it selects.
type Action string

const (
	ActExpire              Action = "expire"                // new TTL, or delete (ttl: 0)
	ActFail                Action = "fail"                  // force-fail (or delete where the schema has no failed state)
	ActReconcileIfVerified Action = "reconcile-if-verified" // reconcile with the verifier's ref, only on a "done" verdict
)

// Kind is the executor's action for a.
func (a Action) Kind() write.Kind {
	switch a {
	case ActExpire:
		return write.KindExpire
	case ActFail:
		return write.KindFail
	}
	return write.KindReconcile
}

// Verifier verdicts a rule can require.
const (
	VerdictDone    = string(verify.Done)
	VerdictNotDone = string(verify.NotDone)
)

// Defaults for what a policy leaves out.
const (
	DefaultCycleDeadline = 30 * time.Second
	DefaultRate          = 50
	// the lease outlives a cycle by this factor at least, so a holder
	// still acting never finds its lease gone
	leaseOverCycle = 2
)

// File is a policy file as written.
type File struct {
	Name          string         `yaml:"name"`
	CycleDeadline units.Duration `yaml:"cycle_deadline"`
	Rate          int            `yaml:"rate"`
	Lease         LeaseConfig    `yaml:"lease"`
	Rules         []RuleConfig   `yaml:"rules"`
}

// LeaseConfig is the leader lease: its key and how long one cycle holds it.
type LeaseConfig struct {
	Key string         `yaml:"key"`
	TTL units.Duration `yaml:"ttl"`
}

// RuleConfig is one keyspace's rule as written.
type RuleConfig struct {
	Keyspace    string       `yaml:"keyspace"`
	Select      SelectConfig `yaml:"select"`
	Action      string       `yaml:"action"`
	TTL         string       `yaml:"ttl"`
	Reason      string       `yaml:"reason"`
	MaxPerCycle int          `yaml:"max_per_cycle"`
	PerHour     int          `yaml:"per_hour"`
	Breaker     int          `yaml:"breaker"`
}

// SelectConfig is which records a rule acts on.
type SelectConfig struct {
	States         []string       `yaml:"states"`
	Flags          []string       `yaml:"flags"`
	MinOverdue     units.Duration `yaml:"min_overdue"`
	LockAbsent     bool           `yaml:"lock_absent"`
	DeadlinePassed bool           `yaml:"deadline_passed"`
	Verdict        string         `yaml:"verdict"`
}

// Policy is a checked policy file.
type Policy struct {
	Name          string
	Path          string
	CycleDeadline time.Duration
	Rate          int
	LeaseKey      string
	LeaseTTL      time.Duration
	Rules         []*Rule
}

// Actor is who the audit log says acted: reaper/<name>.
func (p *Policy) Actor() string { return "reaper/" + p.Name }

// Rule is one checked rule. Keyspace is filled by Bind.
type Rule struct {
	KeyspaceName string
	Keyspace     *inspect.Keyspace
	Line         int
	States       filter.StateSet
	Flags        inspect.Flags
	MinOverdue   time.Duration
	LockAbsent   bool
	DeadlineOver bool
	Verdict      string // "", done or not_done
	Action       Action
	TTL          actions.TTL
	Reason       string
	MaxPerCycle  int
	PerHour      int
	Breaker      int
}

// NeedsVerifier reports whether the rule runs the keyspace's verifier.
func (r *Rule) NeedsVerifier() bool { return r.Verdict != "" }

var nameRe = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// Load reads and checks a policy file.
func Load(path string) (*Policy, error) {
	data, err := safefile.Read(path, safefile.MaxConfig)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("policy %s: file not found", path)
	}
	if err != nil {
		return nil, fmt.Errorf("policy %s: %v", path, err)
	}
	p, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("policy %s: %v", path, err)
	}
	p.Path = path
	return p, nil
}

// Parse decodes and checks a policy document. Every error is one line
// naming the line and the key.
func Parse(data []byte) (*Policy, error) {
	var f File
	root, err := yamldoc.Decode(data, &f)
	if err != nil {
		return nil, err
	}
	if root == nil {
		return nil, errors.New("the policy is empty: it needs a name and rules")
	}
	lines := yamldoc.Index(root)
	at := func(path ...string) int {
		if n := lines.At(path...); n > 0 {
			return n
		}
		return 1
	}
	p := &Policy{Name: f.Name, CycleDeadline: f.CycleDeadline.D(), Rate: f.Rate, LeaseKey: f.Lease.Key, LeaseTTL: f.Lease.TTL.D()}
	if !nameRe.MatchString(p.Name) {
		return nil, fmt.Errorf("line %d: name %q: want 1 to 64 letters, digits, '.', '_' or '-' (it names the actor reaper/<name> and the lease)", at("name"), p.Name)
	}
	if p.CycleDeadline == 0 {
		p.CycleDeadline = DefaultCycleDeadline
	}
	if p.CycleDeadline < time.Second {
		return nil, fmt.Errorf("line %d: cycle_deadline %s: want at least 1s", at("cycle_deadline"), p.CycleDeadline)
	}
	if p.Rate == 0 {
		p.Rate = DefaultRate
	}
	if p.Rate < 0 {
		return nil, fmt.Errorf("line %d: rate %d: want a positive number of writes per second", at("rate"), p.Rate)
	}
	if p.LeaseKey == "" {
		p.LeaseKey = "idemctl:reap:lease:" + p.Name
	}
	if p.LeaseTTL == 0 {
		p.LeaseTTL = leaseOverCycle * p.CycleDeadline
	}
	if p.LeaseTTL < leaseOverCycle*p.CycleDeadline {
		return nil, fmt.Errorf("line %d: lease.ttl %s: want at least %d× cycle_deadline (%s), so a cycle still acting never outlives its lease",
			at("lease", "ttl"), units.ConfigDuration(p.LeaseTTL), leaseOverCycle, units.ConfigDuration(leaseOverCycle*p.CycleDeadline))
	}
	if len(f.Rules) == 0 {
		return nil, fmt.Errorf("line %d: rules: the policy has none (want one per keyspace: keyspace, select, action, max_per_cycle, per_hour, breaker)", at("rules"))
	}
	for i, rc := range f.Rules {
		item := []string{"rules", strconv.Itoa(i)}
		r, err := checkRule(rc, func(key ...string) int {
			if n := lines.At(append(item, key...)...); n > 0 {
				return n
			}
			return at(item...) // a missing key: the rule's own line
		})
		if err != nil {
			return nil, err
		}
		if pace := time.Duration(float64(r.MaxPerCycle) / float64(p.Rate) * float64(time.Second)); pace > p.CycleDeadline {
			return nil, fmt.Errorf("line %d: rules[%s]: max_per_cycle %d at rate %d a second takes %s, longer than cycle_deadline %s: raise rate or cycle_deadline, or lower max_per_cycle",
				r.Line, r.KeyspaceName, r.MaxPerCycle, p.Rate, units.ConfigDuration(pace.Round(time.Second)), units.ConfigDuration(p.CycleDeadline))
		}
		p.Rules = append(p.Rules, r)
	}
	return p, nil
}

func checkRule(rc RuleConfig, at func(key ...string) int) (*Rule, error) {
	r := &Rule{KeyspaceName: rc.Keyspace, Line: at(), MinOverdue: rc.Select.MinOverdue.D(), LockAbsent: rc.Select.LockAbsent,
		DeadlineOver: rc.Select.DeadlinePassed, Verdict: rc.Select.Verdict, Action: Action(rc.Action), Reason: strings.TrimSpace(rc.Reason),
		MaxPerCycle: rc.MaxPerCycle, PerHour: rc.PerHour, Breaker: rc.Breaker}
	bad := func(key []string, format string, a ...any) error {
		return fmt.Errorf("line %d: rules[%s]: %s", at(key...), rc.Keyspace, fmt.Sprintf(format, a...))
	}
	if r.KeyspaceName == "" {
		return nil, fmt.Errorf("line %d: a rule needs keyspace: (the name of a keyspace in the config)", at())
	}
	states := rc.Select.States
	if len(states) == 0 {
		states = []string{inspect.StateProcessing.String()}
	}
	var err error
	if r.States, err = filter.ParseStates(states); err != nil {
		return nil, bad([]string{"select", "states"}, "select.states: %v", err)
	}
	if r.Flags, err = filter.ParseFlags(rc.Select.Flags); err != nil {
		return nil, bad([]string{"select", "flags"}, "select.flags: %v", err)
	}
	if r.MinOverdue < 0 {
		return nil, bad([]string{"select", "min_overdue"}, "select.min_overdue must not be negative")
	}
	switch r.Verdict {
	case "", VerdictDone, VerdictNotDone:
	default:
		return nil, bad([]string{"select", "verdict"}, "select.verdict %q: want done or not_done", r.Verdict)
	}
	switch r.Action {
	case ActExpire, ActFail:
	case ActReconcileIfVerified:
		if r.Verdict == VerdictNotDone {
			return nil, bad([]string{"select", "verdict"}, "reconcile-if-verified acts on a done verdict only: drop select.verdict or use action fail")
		}
		r.Verdict = VerdictDone
	case "":
		return nil, bad(nil, "action: missing (want expire, fail or reconcile-if-verified)")
	default:
		return nil, bad([]string{"action"}, "action %q: want expire, fail or reconcile-if-verified", rc.Action)
	}
	if r.TTL, err = actions.ParseTTL(r.Action.Kind(), rc.TTL); err != nil {
		return nil, bad([]string{"ttl"}, "ttl: %v", err)
	}
	for _, lim := range []struct {
		key string
		v   int
		why string
	}{
		{"max_per_cycle", r.MaxPerCycle, "records acted on in one cycle"},
		{"per_hour", r.PerHour, "records acted on in any hour, by every copy together"},
		{"breaker", r.Breaker, "when more records than this qualify in one cycle, act on none: an incident for a human"},
	} {
		if lim.v <= 0 {
			return nil, bad([]string{lim.key}, "%s: want a positive number (%s)", lim.key, lim.why)
		}
	}
	if r.MaxPerCycle > r.Breaker {
		return nil, bad([]string{"max_per_cycle"}, "max_per_cycle %d is above breaker %d: the breaker would trip before the cap is reached", r.MaxPerCycle, r.Breaker)
	}
	return r, nil
}

// Bind resolves each rule's keyspace with lookup and checks the rule
// against its schema. hasVerifier says whether a keyspace has one.
func (p *Policy) Bind(lookup func(name string) (*inspect.Keyspace, error), hasVerifier func(ks *inspect.Keyspace) bool) error {
	for _, r := range p.Rules {
		ks, err := lookup(r.KeyspaceName)
		if err != nil {
			return fmt.Errorf("line %d: rules[%s]: %v", r.Line, r.KeyspaceName, err)
		}
		s := ks.Schema
		switch {
		case r.LockAbsent && s.Lock == nil:
			return fmt.Errorf("line %d: rules[%s]: select.lock_absent: schema %s has no lock companion", r.Line, r.KeyspaceName, s.Name)
		case r.DeadlineOver && s.Deadline == nil:
			return fmt.Errorf("line %d: rules[%s]: select.deadline_passed: schema %s stores no deadline", r.Line, r.KeyspaceName, s.Name)
		case r.NeedsVerifier() && (hasVerifier == nil || !hasVerifier(ks)):
			return fmt.Errorf("line %d: rules[%s]: the rule needs a verifier verdict, but keyspace %s has no verify: hook in the config", r.Line, r.KeyspaceName, ks.Name)
		}
		if r.Action.Kind() == write.KindReconcile && s.Actions.Reconcile.Mode == "refuse" {
			return fmt.Errorf("line %d: rules[%s]: schema %s cannot be reconciled by idemctl: %s", r.Line, r.KeyspaceName, s.Name, s.Actions.Reconcile.Why)
		}
		r.Keyspace = ks
	}
	return nil
}

// reason is what the audit log and the record say about a write.
func (r *Rule) reason(p *Policy) string {
	if r.Reason != "" {
		return p.Actor() + ": " + r.Reason
	}
	return fmt.Sprintf("%s: %s of %s", p.Actor(), r.Action, r.describe())
}

// describe is the rule's selection in one line.
func (r *Rule) describe() string {
	parts := []string{"state " + r.States.String()}
	if r.Flags != 0 {
		parts = append(parts, "flags "+r.Flags.String())
	}
	if r.States.Has(inspect.StateProcessing) && r.MinOverdue > 0 {
		parts = append(parts, units.ConfigDuration(r.MinOverdue)+" past the processing timeout")
	} else if r.States.Has(inspect.StateProcessing) {
		parts = append(parts, "past the processing timeout")
	}
	if r.LockAbsent {
		parts = append(parts, "lock absent")
	}
	if r.DeadlineOver {
		parts = append(parts, "deadline passed")
	}
	if r.Verdict != "" {
		parts = append(parts, "verdict "+r.Verdict)
	}
	return strings.Join(parts, ", ")
}
