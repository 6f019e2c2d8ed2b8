package doctor

import (
	"fmt"
	"strings"
	"time"

	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/inspect/ledger"
	"github.com/idemctl/idemctl/internal/units"
)

// input is what every rule reads.
type input struct {
	opt  Options
	srv  *Server
	snap *inspect.Snapshot
	obs  *observations
	kss  []*inspect.Keyspace
}

// ksView is one keyspace as the rules see it.
type ksView struct {
	ks    *inspect.Keyspace
	rep   *inspect.Report         // this keyspace's aggregate; nil when the scan found no record
	kr    *inspect.KeyspaceReport // its keyspace row (age-unknown causes, undecoded)
	age   inspect.AgeReport
	obs   *ksObs
	cov   inspect.Coverage
	nodes []inspect.Coverage
}

func (in *input) keyspaces() []ksView {
	var out []ksView
	for _, ks := range in.kss {
		v := ksView{ks: ks, obs: in.obs.get(ks.Name)}
		for i := range in.snap.Keyspaces {
			k := &in.snap.Keyspaces[i]
			if k.Name != ks.Name {
				continue
			}
			v.cov, v.age, v.nodes = k.Coverage, k.Report.ProcessingAge, k.Nodes
			for j := range k.Report.Keyspaces {
				if k.Report.Keyspaces[j].Name == ks.Name {
					v.rep, v.kr = &k.Report, &k.Report.Keyspaces[j]
				}
			}
		}
		out = append(out, v)
	}
	return out
}

func (v ksView) flag(name string) int64 {
	if v.rep == nil {
		return 0
	}
	return v.rep.Flags[name]
}

func (v ksView) processing() int64 {
	if v.rep == nil {
		return 0
	}
	return v.rep.ByState["processing"]
}

// judge is the verdict on a keyspace where n records are at fault, when
// there is no finding to add (quiet): nothing to judge without records, ok
// when none is at fault.
func (v ksView) judge(n int64) (status, reason string, quiet bool) {
	switch {
	case v.rep == nil:
		return StatusNoData, "no records", true
	case n <= 0:
		return StatusOK, "", true
	}
	return "", "", false
}

// rule is one check, in the order the issue lists them.
type rule struct {
	id  string
	run func(in *input, rep *Report)
}

func (r *Report) add(f Finding) {
	r.Findings = append(r.Findings, f)
	r.Checks = append(r.Checks, Check{Rule: f.Rule, Keyspace: f.Keyspace, Status: StatusFinding})
}

func (r *Report) check(rule, ks, status, reason string) {
	r.Checks = append(r.Checks, Check{Rule: rule, Keyspace: ks, Status: status, Reason: reason})
}

// perKeyspace runs fn on each keyspace; a keyspace whose scan was cut is
// judged on what was read (counts only grow) but a quiet result is
// "skipped", never "ok".
func perKeyspace(id string, fn func(in *input, v ksView, rep *Report) (status, reason string)) rule {
	return rule{id: id, run: func(in *input, rep *Report) {
		for _, v := range in.keyspaces() {
			n := len(rep.Findings)
			status, reason := fn(in, v, rep)
			if len(rep.Findings) > n {
				continue
			}
			if status == StatusOK && !v.cov.Complete {
				status, reason = StatusSkipped, "the scan of this keyspace was incomplete: nothing found in part of it proves nothing"
			}
			rep.check(id, v.ks.Name, status, reason)
		}
	}}
}

// The rules live by family: rules_coverage.go, rules_timing.go,
// rules_ttl.go, rules_server.go, rules_records.go, rules_ledger.go.
var rules = []rule{
	{"scan-coverage", ruleCoverage},
	perKeyspace("reserve-ttl", ruleReserveTTL),
	perKeyspace("processing-timeout", ruleProcessingTimeout),
	perKeyspace("retention", ruleRetention),
	perKeyspace("no-ttl", ruleNoTTL),
	perKeyspace("processing-no-ttl", ruleProcessingNoTTL),
	perKeyspace("in-progress-expiration", ruleInProgressExpiration),
	{"eviction", ruleEviction},
	{"persistence", rulePersistence},
	{"replica", ruleReplica},
	perKeyspace("cluster-slots", ruleClusterSlots),
	perKeyspace("mixed-formats", ruleMixedFormats),
	perKeyspace("missing-fingerprint", ruleMissingFingerprint),
	perKeyspace("large-response", ruleLargeResponse),
	{"field-ttl", ruleFieldTTL},
	perLedger("ledger-trim", ledger.ZSetWindow, ruleLedgerTrim),
	perLedger("ledger-window", "", ruleLedgerWindow),
	perLedger("ledger-no-ttl", ledger.SetPerPeriod, ruleLedgerNoTTL),
}

// RuleIDs lists the rules in the order they run.
func RuleIDs() []string {
	out := make([]string, len(rules))
	for i, r := range rules {
		out[i] = r.id
	}
	return out
}

func dur(ms int64) string { return units.FormatMs(ms) }
func cfg(d time.Duration) string {
	return units.ConfigDuration(d)
}
func count(n int64) string { return units.FormatCount(n) }

// keyspaceSetting is the exact config line (and flag) for one keyspace.
func keyspaceSetting(ks, key string, d time.Duration) string {
	return fmt.Sprintf("%s: %s under keyspaces.%s in the config (or --%s %s)", key, cfg(d), inspect.Sanitize(ks), strings.ReplaceAll(key, "_", "-"), cfg(d))
}
