package doctor

import (
	"fmt"
	"strings"
	"time"

	"github.com/idemctl/idemctl/inspect"
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

// ruleCoverage: the evidence gaps no other rule owns — a scan that did not
// cover a keyspace, a pattern that matched nothing, ages unreadable.
func ruleCoverage(in *input, rep *Report) {
	found := false
	for _, g := range in.snap.Gaps() {
		switch {
		case g.Kind == inspect.GapScanIncomplete:
			rep.add(Finding{Rule: "scan-coverage", Severity: Critical, Keyspace: g.Keyspace, Title: "the scan did not cover the keyspace: every count below is a lower bound",
				Evidence: []string{g.Message}, Fix: g.Fix})
		case g.Kind == inspect.GapNoMatch:
			rep.add(Finding{Rule: "scan-coverage", Severity: Critical, Keyspace: g.Keyspace, Title: "the keyspace's pattern matches no key in a database that holds keys",
				Evidence: []string{g.Message}, Figures: map[string]int64{"database_keys": in.snap.DBKeys}, Fix: g.Fix})
		case g.Cause == inspect.AgeGapTTLUnreadable.String() || g.Cause == inspect.AgeGapNoTimestamp.String():
			rep.add(Finding{Rule: "scan-coverage", Severity: Critical, Keyspace: g.Keyspace, Title: "processing records whose age cannot be derived: stale detection is blind to them",
				Evidence: []string{g.Message}, Figures: map[string]int64{"records": g.Records},
				Samples: in.obs.get(g.Keyspace).samples["age:"+g.Cause], Fix: g.Fix})
		default:
			continue // reserve-ttl, processing-no-ttl and mixed-formats own the others
		}
		found = true
	}
	if !found {
		rep.check("scan-coverage", "", StatusOK, "")
	}
}

func ruleReserveTTL(in *input, v ksView, rep *Report) (string, string) {
	s := v.ks.Schema
	if !s.AgeFromTTL {
		return StatusNoData, "schema " + s.Name + " does not derive ages from the TTL"
	}
	o := v.obs
	reserve := v.ks.ReserveTTL
	above := int64(0)
	if v.rep != nil {
		above = v.kr.AgeUnknown[inspect.AgeGapTTLAboveReserve.String()] + v.kr.AgeUnknown[inspect.AgeGapNoReserveTTL.String()]
	}
	if o.procTTLN == 0 {
		return StatusNoData, "no processing record with a TTL was in flight during the scan"
	}
	proposed := inspect.ProposeDuration(o.procTTLMax)
	figs := map[string]int64{"processing_with_ttl": o.procTTLN, "max_processing_ttl_ms": o.procTTLMax,
		"reserve_ttl_ms": reserve.Milliseconds(), "proposed_reserve_ttl_ms": proposed.Milliseconds()}
	switch {
	case above > 0:
		figs["age_unknown"] = above
		rep.add(Finding{Rule: "reserve-ttl", Severity: Critical, Keyspace: v.ks.Name,
			Title: fmt.Sprintf("%s processing records carry a TTL above the configured reserve TTL: their ages are unknown and stale records go unseen", count(above)),
			Evidence: []string{
				fmt.Sprintf("largest TTL left on a processing record: %s; configured reserve TTL: %s", dur(o.procTTLMax), cfg(reserve)),
				fmt.Sprintf("%s of %s processing records with a TTL are above it", count(above), count(o.procTTLN)),
			},
			Figures: figs, Samples: o.samples["age:"+inspect.AgeGapTTLAboveReserve.String()],
			Fix: keyspaceSetting(v.ks.Name, "reserve_ttl", proposed) + " — the TTL the application's reserve step sets, read from the largest TTL seen"})
	case o.procTTLN >= 10 && o.procTTLMax*2 < reserve.Milliseconds():
		rep.add(Finding{Rule: "reserve-ttl", Severity: Warning, Keyspace: v.ks.Name,
			Title: "the configured reserve TTL is over twice the largest TTL any processing record carries: ages are overstated and records look stale too early",
			Evidence: []string{fmt.Sprintf("largest TTL left on %s processing records: %s; configured reserve TTL: %s, so even the newest record reads %s old",
				count(o.procTTLN), dur(o.procTTLMax), cfg(reserve), dur(reserve.Milliseconds()-o.procTTLMax))},
			Figures: figs,
			Fix:     keyspaceSetting(v.ks.Name, "reserve_ttl", proposed) + " — if the application reserves with a shorter TTL than configured"})
	default:
		return StatusOK, ""
	}
	return "", ""
}

func ruleProcessingTimeout(in *input, v ksView, rep *Report) (string, string) {
	timeout := v.ks.ProcessingTimeout
	a := v.age
	if timeout <= 0 {
		return StatusNoData, "no processing timeout configured"
	}
	if a.Count < 10 {
		return StatusNoData, fmt.Sprintf("only %d processing records with a known age: too few to judge the timeout", a.Count)
	}
	t := timeout.Milliseconds()
	figs := map[string]int64{"known_age": a.Count, "p50_ms": a.P50, "p90_ms": a.P90, "p99_ms": a.P99, "timeout_ms": t}
	switch {
	case a.P50 > t:
		stale := int64(0)
		if v.rep != nil {
			stale = v.rep.Stale
		}
		rep.add(Finding{Rule: "processing-timeout", Severity: Warning, Keyspace: v.ks.Name,
			Title: "most processing records are older than the processing timeout: if their workers are alive, the timeout is too short (false stale)",
			Evidence: []string{fmt.Sprintf("processing age p50 %s, p90 %s, p99 %s over %s records; timeout %s; %s flagged stale",
				dur(a.P50), dur(a.P90), dur(a.P99), count(a.Count), cfg(timeout), count(stale))},
			Figures: figs,
			Fix: keyspaceSetting(v.ks.Name, "processing_timeout", inspect.ProposeDuration(a.P99*3/2)) +
				" if these requests are still running (a recovery would run them twice); if their workers died, repair them (idemctl fail) and keep the timeout"})
	case a.P99*10 < t && a.P99 > 0:
		p := max(inspect.ProposeDuration(a.P99*3), time.Second)
		rep.add(Finding{Rule: "processing-timeout", Severity: Info, Keyspace: v.ks.Name,
			Title:    "the processing timeout is over ten times the slowest request in flight: a crashed request waits the whole timeout before anyone sees it",
			Evidence: []string{fmt.Sprintf("processing age p99 %s over %s records; timeout %s", dur(a.P99), count(a.Count), cfg(timeout))},
			Figures:  figs,
			Fix:      keyspaceSetting(v.ks.Name, "processing_timeout", p) + " (three times the observed p99) for faster recovery"})
	default:
		return StatusOK, ""
	}
	return "", ""
}

func ruleRetention(in *input, v ksView, rep *Report) (string, string) {
	o := v.obs
	h := in.opt.RetryHorizon
	if o.doneN == 0 {
		return StatusNoData, "no completed record with a TTL to measure the retention by"
	}
	// The largest TTL left on a completed record is the retention the
	// complete step sets (less the age of the newest one).
	observed := o.doneTTLMax
	figs := map[string]int64{"completed_with_ttl": o.doneN, "max_completed_ttl_ms": observed,
		"retention_ms": v.ks.Retention.Milliseconds(), "retry_horizon_ms": h.Milliseconds()}
	switch {
	case observed < h.Milliseconds()-1000:
		rep.add(Finding{Rule: "retention", Severity: Warning, Keyspace: v.ks.Name,
			Title: fmt.Sprintf("completed records expire before the %s retry horizon: a retry after that runs the request again", cfg(h)),
			Evidence: []string{fmt.Sprintf("largest TTL left on %s completed records: %s (configured retention %s); retry horizon %s",
				count(o.doneN), dur(observed), cfg(v.ks.Retention), cfg(h))},
			Figures: figs,
			Fix: fmt.Sprintf("make the complete step set a TTL of at least %s (EXPIRE key %d) and %s; or, if clients really stop retrying sooner, say so with --retry-horizon",
				cfg(h), int64(h.Seconds()), keyspaceSetting(v.ks.Name, "retention", h))})
	case observed > 2*h.Milliseconds():
		// Steady arrivals: the records older than the horizon hold the
		// share (retention − horizon) / retention of the memory.
		free := int64(float64(o.doneMem) * float64(observed-h.Milliseconds()) / float64(observed))
		figs["memory_freed_bytes_estimate"] = free
		rep.add(Finding{Rule: "retention", Severity: Info, Keyspace: v.ks.Name,
			Title: fmt.Sprintf("completed records are kept far longer than the %s retry horizon: memory, and replay bodies (personal data) kept for nothing", cfg(h)),
			Evidence: []string{fmt.Sprintf("largest TTL left on %s completed records: %s; they use %s; a %s retention would free about %s (assuming steady traffic)",
				count(o.doneN), dur(observed), units.FormatBytes(o.doneMem), cfg(h), units.FormatBytes(free))},
			Figures: figs,
			Fix:     fmt.Sprintf("make the complete step set a TTL of %s (EXPIRE key %d) and %s", cfg(h), int64(h.Seconds()), keyspaceSetting(v.ks.Name, "retention", h))})
	default:
		return StatusOK, ""
	}
	return "", ""
}

func ruleNoTTL(in *input, v ksView, rep *Report) (string, string) {
	n := v.flag("no_ttl") - v.flag("processing_no_ttl")
	if status, reason, quiet := v.judge(n); quiet {
		return status, reason
	}
	s := v.ks.Schema.Name
	rep.add(Finding{Rule: "no-ttl", Severity: Warning, Keyspace: v.ks.Name,
		Title: fmt.Sprintf("%s records that are not in flight never expire: they pile up until Redis is full", count(n)),
		Evidence: []string{fmt.Sprintf("%s of %s records have no TTL (PTTL -1)", count(n), count(v.rep.Total)),
			"likely cause: " + causeFor(noTTLCause, s, "the writer stored them without a TTL (or a PERSIST removed it)")},
		Figures: map[string]int64{"records": n}, Samples: v.obs.samples[inspect.FlagNoTTL.String()],
		Fix: fmt.Sprintf("set the retention TTL where the record is completed (EXPIRE key %d); repair the existing ones with idemctl scan --keyspace %s --flag no_ttl -o ndjson | jq -r .key | idemctl expire --from-file - --ttl %s --reason …",
			int64(v.ks.Retention.Seconds()), inspect.Sanitize(v.ks.Name), cfg(v.ks.Retention))})
	return "", ""
}

func ruleProcessingNoTTL(in *input, v ksView, rep *Report) (string, string) {
	n := v.flag("processing_no_ttl")
	if status, reason, quiet := v.judge(n); quiet {
		return status, reason
	}
	s := v.ks.Schema.Name
	rep.add(Finding{Rule: "processing-no-ttl", Severity: Critical, Keyspace: v.ks.Name,
		Title: fmt.Sprintf("%s processing records have no TTL: every retry of these requests is blocked until someone repairs them", count(n)),
		Evidence: []string{fmt.Sprintf("%s of %s processing records have no TTL", count(n), count(v.processing())),
			"likely cause: " + causeFor(processingNoTTLCause, s, "the reserve step stored the record without a TTL")},
		Figures: map[string]int64{"records": n}, Samples: v.obs.samples[inspect.FlagProcessingNoTTL.String()],
		Fix: causeFor(processingNoTTLFix, s, "make the reserve step set a TTL") +
			fmt.Sprintf("; repair these with idemctl fail (or expire --ttl 0) after checking the source of truth: idemctl scan --keyspace %s --flag processing_no_ttl", inspect.Sanitize(v.ks.Name))})
	return "", ""
}

// ruleInProgressExpiration: Powertools stores in_progress_expiration only
// when the handler registers its Lambda context; without it the libraries
// disagree, and neither does what an operator wants.
func ruleInProgressExpiration(in *input, v ksView, rep *Report) (string, string) {
	if v.ks.Schema.Deadline == nil || v.ks.Schema.Name != "powertools" {
		return StatusNoData, "the schema stores no in-progress deadline"
	}
	n := v.obs.noDeadline
	if v.processing() == 0 {
		return StatusNoData, "no processing record in flight during the scan"
	}
	if n == 0 {
		return StatusOK, ""
	}
	rep.add(Finding{Rule: "in-progress-expiration", Severity: Warning, Keyspace: v.ks.Name,
		Title: fmt.Sprintf("%s INPROGRESS records store no in_progress_expiration: the handler did not register its Lambda context", count(n)),
		Evidence: []string{
			fmt.Sprintf("%s of %s processing records lack in_progress_expiration", count(n), count(v.processing())),
			"Python's layer then answers every retry \"already in progress\" until the record's expiration (its whole TTL); " +
				"TypeScript's takes such a record over at once, so a retry runs the handler again while the first invocation may still be running",
		},
		Figures: map[string]int64{"records": n}, Samples: v.obs.samples["no_deadline"],
		Fix: "register the Lambda context in the handler: Python config.register_lambda_context(context); TypeScript config.registerLambdaContext(context) (makeIdempotent/idempotent do it when given the context)"})
	return "", ""
}

func ruleEviction(in *input, rep *Report) {
	s := in.srv
	if s.InfoErr != nil {
		rep.check("eviction", "", StatusSkipped, s.InfoErr.Error())
		return
	}
	policy, ok := s.setting("maxmemory-policy", "maxmemory_policy")
	if !ok {
		rep.check("eviction", "", StatusSkipped, "neither INFO memory (maxmemory_policy) nor CONFIG GET maxmemory-policy answered")
		return
	}
	maxmem, _ := s.infoInt("maxmemory")
	evicted, _ := s.infoInt("evicted_keys")
	var withTTL int64
	for _, o := range in.obs.ks {
		withTTL += o.withTTL
	}
	figs := map[string]int64{"maxmemory_bytes": maxmem, "evicted_keys": evicted, "records_with_ttl": withTTL}
	ev := []string{fmt.Sprintf("maxmemory-policy %s, maxmemory %s, evicted_keys %s since the server started (INFO)",
		inspect.Sanitize(policy), limitText(maxmem), count(evicted))}
	fix := "CONFIG SET maxmemory-policy noeviction and the same line in redis.conf (maxmemory-policy noeviction; on a managed service, its parameter group); keep idempotency records off a server that caches with eviction"
	sev, title := Info, ""
	switch {
	case policy == "noeviction":
		if evicted == 0 {
			rep.check("eviction", "", StatusOK, "")
			return
		}
		sev, title = Warning, "keys were evicted under an earlier policy: idempotency records may have been among them"
	case strings.HasPrefix(policy, "allkeys-"):
		sev, title = Critical, "the eviction policy can delete any key, idempotency records included: a retried payment then runs twice"
		if maxmem == 0 && evicted == 0 {
			sev, title = Warning, "the eviction policy would delete any key, idempotency records included, once a maxmemory is set"
		}
	case strings.HasPrefix(policy, "volatile-"):
		if withTTL == 0 && evicted == 0 {
			rep.check("eviction", "", StatusOK, "volatile-* evicts only keys with a TTL, and no record has one")
			return
		}
		sev, title = Critical, "the eviction policy deletes keys with a TTL, which idempotency records have: a retried request then runs twice"
		if maxmem == 0 && evicted == 0 {
			sev, title = Warning, "the eviction policy would delete keys with a TTL, idempotency records included, once a maxmemory is set"
		}
	default:
		sev, title = Warning, "unknown maxmemory-policy: records may be evicted"
	}
	if evicted > 0 {
		sev = Critical
		ev = append(ev, fmt.Sprintf("%s keys have already been evicted", count(evicted)))
	}
	rep.add(Finding{Rule: "eviction", Severity: sev, Title: title, Evidence: ev, Figures: figs, Fix: fix})
}

func limitText(maxmem int64) string {
	if maxmem == 0 {
		return "0 (no limit)"
	}
	return units.FormatBytes(maxmem)
}

var fsyncRank = map[string]int{"no": 0, "everysec": 1, "always": 2}

func rulePersistence(in *input, rep *Report) {
	s := in.srv
	if s.InfoErr != nil {
		rep.check("persistence", "", StatusSkipped, s.InfoErr.Error())
		return
	}
	aof, ok := s.infoInt("aof_enabled")
	if !ok {
		rep.check("persistence", "", StatusSkipped, "INFO persistence has no aof_enabled field")
		return
	}
	fix := "CONFIG SET appendonly yes; CONFIG SET appendfsync " + in.opt.RequireFsync + "; CONFIG REWRITE (redis.conf: appendonly yes, appendfsync " + in.opt.RequireFsync + ")"
	if aof == 1 {
		fsync, ok := s.setting("appendfsync", "")
		if !ok {
			rep.check("persistence", "", StatusSkipped, "AOF is on, but appendfsync is unknown: "+errText(s.ConfigErr))
			return
		}
		if fsyncRank[fsync] >= fsyncRank[in.opt.RequireFsync] {
			rep.check("persistence", "", StatusOK, "")
			return
		}
		rep.add(Finding{Rule: "persistence", Severity: Warning,
			Title:    fmt.Sprintf("appendfsync %s is weaker than the required %s: a crash loses the records written since the last fsync", inspect.Sanitize(fsync), in.opt.RequireFsync),
			Evidence: []string{"aof_enabled 1 (INFO); appendfsync " + inspect.Sanitize(fsync) + " (CONFIG GET)"}, Fix: fix})
		return
	}
	save, ok := s.setting("save", "")
	if !ok {
		saves, _ := s.infoInt("rdb_changes_since_last_save")
		rep.check("persistence", "", StatusSkipped, fmt.Sprintf("AOF is off (INFO) and the RDB save points are unknown (%s); %s changes since the last save",
			errText(s.ConfigErr), count(saves)))
		return
	}
	if strings.TrimSpace(save) == "" {
		rep.add(Finding{Rule: "persistence", Severity: Critical,
			Title:    "persistence is off (no AOF, no RDB save points): a restart forgets every idempotency record, and every retry after it runs again",
			Evidence: []string{`aof_enabled 0 (INFO); save "" (CONFIG GET)`}, Fix: fix})
		return
	}
	rep.add(Finding{Rule: "persistence", Severity: Warning,
		Title:    "RDB snapshots only: a restart loses the records written since the last snapshot, and their retries run again",
		Evidence: []string{fmt.Sprintf("aof_enabled 0 (INFO); save %q (CONFIG GET)", inspect.Sanitize(save))}, Fix: fix})
}

func errText(err error) string {
	if err == nil {
		return "not read"
	}
	return err.Error()
}

func ruleReplica(in *input, rep *Report) {
	s := in.srv
	if s.InfoErr != nil {
		rep.check("replica", "", StatusSkipped, s.InfoErr.Error())
		return
	}
	role := s.Info["role"]
	found := false
	if role == "slave" {
		ro, ok := s.setting("replica-read-only", "")
		switch {
		case !ok:
			rep.check("replica", "", StatusSkipped, "connected to a replica; whether it accepts writes is unknown: "+errText(s.ConfigErr))
			return
		case ro == "no":
			found = true
			rep.add(Finding{Rule: "replica", Severity: Critical,
				Title: "writes can reach a replica (replica-read-only no): records written there are unseen by the primary and erased at the next resync",
				Evidence: []string{fmt.Sprintf("role slave of %s:%s (INFO); replica-read-only no (CONFIG GET)",
					inspect.Sanitize(s.Info["master_host"]), inspect.Sanitize(s.Info["master_port"]))},
				Fix: "CONFIG SET replica-read-only yes (redis.conf: replica-read-only yes) and point the application's writes at the primary"})
		}
		if lag, ok := s.infoInt("master_last_io_seconds_ago"); ok && time.Duration(lag)*time.Second > in.opt.MaxLag {
			found = true
			rep.add(Finding{Rule: "replica", Severity: Warning,
				Title:    "this replica lags its primary: what idemctl reads here is behind, and a failover to it loses the records written meanwhile",
				Evidence: []string{fmt.Sprintf("master_last_io_seconds_ago %d (INFO)", lag)}, Figures: map[string]int64{"lag_seconds": lag},
				Fix: "scan the primary; check the replica's network and load"})
		}
	}
	for k, v := range s.Info {
		if !strings.HasPrefix(k, "slave") || !strings.Contains(v, "lag=") {
			continue
		}
		var lag int64
		for _, kv := range strings.Split(v, ",") {
			if f, val, ok := strings.Cut(kv, "="); ok && f == "lag" {
				fmt.Sscan(val, &lag)
			}
		}
		if time.Duration(lag)*time.Second > in.opt.MaxLag {
			found = true
			rep.add(Finding{Rule: "replica", Severity: Warning,
				Title:    fmt.Sprintf("a replica lags %ds behind: a failover to it loses the idempotency records written in that window", lag),
				Evidence: []string{fmt.Sprintf("%s:%s (INFO replication)", k, inspect.Sanitize(v))}, Figures: map[string]int64{"lag_seconds": lag},
				Fix: "check the replica's network and load; with WAIT 1 <ms> after RESERVE and COMPLETE the application can make the write reach a replica before it answers"})
		}
	}
	if !found {
		rep.check("replica", "", StatusOK, "role "+inspect.Sanitize(role))
	}
}

func ruleMixedFormats(in *input, v ksView, rep *Report) (string, string) {
	if v.rep == nil {
		return StatusNoData, "no records"
	}
	n, total := v.kr.Undecoded, v.rep.Total
	if n == 0 {
		return StatusOK, ""
	}
	sev, title := Warning, fmt.Sprintf("%s records under this pattern are not of schema %s: another format shares the pattern", count(n), v.ks.Schema.Name)
	if n*2 > total {
		sev, title = Critical, fmt.Sprintf("most records under this pattern do not decode as %s: every count for the keyspace is wrong", v.ks.Schema.Name)
	}
	rep.add(Finding{Rule: "mixed-formats", Severity: sev, Keyspace: v.ks.Name, Title: title,
		Evidence: []string{fmt.Sprintf("%s of %s records (%d%%) are undecoded or fail to decode", count(n), count(total), n*100/max(total, 1))},
		Figures:  map[string]int64{"records": n, "total": total}, Samples: v.obs.samples[inspect.FlagUndecoded.String()],
		Fix: fmt.Sprintf("run idemctl detect --match %q: narrow the keyspace's match to one format, or add a keyspace for the other", inspect.Sanitize(v.ks.Match))})
	return "", ""
}

func ruleMissingFingerprint(in *input, v ksView, rep *Report) (string, string) {
	s := v.ks.Schema
	if s.Fingerprint == "" {
		if len(s.Requires) > 0 {
			return StatusNoData, "the format compares the stored request instead of a fingerprint"
		}
		if v.rep == nil {
			return StatusNoData, "no records"
		}
		rep.add(Finding{Rule: "missing-fingerprint", Severity: Info, Keyspace: v.ks.Name,
			Title:    "the record format stores no request fingerprint: a key reused with another body replays the first response without anyone noticing",
			Evidence: []string{"schema " + s.Name + " has no fingerprint field"},
			Fix:      "store a hash of the canonical request body with the record and compare it on every retry (answer 422 on a mismatch)"})
		return "", ""
	}
	n := v.flag("missing_fingerprint")
	if status, reason, quiet := v.judge(n); quiet {
		return status, reason
	}
	rep.add(Finding{Rule: "missing-fingerprint", Severity: Warning, Keyspace: v.ks.Name,
		Title:    fmt.Sprintf("%s records have no fingerprint: reuse of their keys with another body cannot be detected", count(n)),
		Evidence: []string{fmt.Sprintf("%s of %s records lack %s", count(n), count(v.rep.Total), inspect.Sanitize(s.Fingerprint))},
		Figures:  map[string]int64{"records": n}, Samples: v.obs.samples[inspect.FlagMissingFingerprint.String()],
		Fix: "make the reserve step store the request fingerprint (" + inspect.Sanitize(s.Fingerprint) + ") with the record"})
	return "", ""
}

func ruleLargeResponse(in *input, v ksView, rep *Report) (string, string) {
	n := v.flag("large_response")
	if status, reason, quiet := v.judge(n); quiet {
		return status, reason
	}
	rep.add(Finding{Rule: "large-response", Severity: Warning, Keyspace: v.ks.Name,
		Title: fmt.Sprintf("%s records store replay bodies above %s: memory, and personal data kept for the whole retention", count(n), units.FormatBytes(v.ks.LargeResponse)),
		Evidence: []string{fmt.Sprintf("%s records above %s; the largest %s; the keyspace uses %s",
			count(n), units.FormatBytes(v.ks.LargeResponse), units.FormatBytes(v.obs.respMax), units.FormatBytes(v.rep.MemoryBytes.Total))},
		Figures: map[string]int64{"records": n, "largest_bytes": v.obs.respMax}, Samples: v.obs.samples[inspect.FlagLargeResponse.String()],
		Fix: "store a bounded replay (status and a reference to the result) instead of the whole body; if these sizes are expected, raise large_response for the keyspace"})
	return "", ""
}

func ruleFieldTTL(in *input, rep *Report) {
	var mixed int64
	var samples []string
	for _, o := range in.obs.ks {
		samples = append(samples, o.samples[inspect.FlagFieldTTLMixed.String()]...)
	}
	for _, v := range in.keyspaces() {
		mixed += v.flag("field_ttl_mixed")
	}
	if in.srv.InfoErr != nil && mixed == 0 {
		rep.check("field-ttl", "", StatusSkipped, in.srv.InfoErr.Error())
		return
	}
	sub, known := in.srv.keyspaceField("subexpiry")
	switch {
	case mixed > 0:
		rep.add(Finding{Rule: "field-ttl", Severity: Warning,
			Title:    fmt.Sprintf("%s records have fields that expire at different times: each will be left half-written (a response without its state, or the reverse)", count(mixed)),
			Evidence: []string{fmt.Sprintf("%s records flagged field_ttl_mixed; %s keys with hash-field TTLs (INFO keyspace subexpiry)", count(mixed), count(sub))},
			Figures:  map[string]int64{"records": mixed, "subexpiry_keys": sub}, Samples: capSamples(samples),
			Fix: "expire the record as a whole (EXPIRE on the key) rather than its fields (HEXPIRE), or give every field the same HPEXPIRE in one call"})
	case known && sub > 0:
		rep.add(Finding{Rule: "field-ttl", Severity: Info,
			Title:    "the server holds hashes whose fields expire individually: idemctl reads a record's end as its first field's",
			Evidence: []string{fmt.Sprintf("%s keys with hash-field TTLs (INFO keyspace subexpiry)", count(sub))},
			Figures:  map[string]int64{"subexpiry_keys": sub},
			Fix:      "nothing to change if every field of a record shares one TTL; otherwise expire records whole (EXPIRE)"})
	case !known:
		rep.check("field-ttl", "", StatusNoData, "the server reports no hash-field TTLs (before Redis 7.4 they do not exist)")
	default:
		rep.check("field-ttl", "", StatusOK, "")
	}
}

func capSamples(s []string) []string {
	if len(s) > samplesPer {
		return s[:samplesPer]
	}
	return s
}

// ruleClusterSlots: a keyspace whose keys sit on one node of a cluster
// (a hash tag around the principal, e.g. {customer-42}) makes that node the
// hot spot for every request of it, and its failover the loss of all of it.
func ruleClusterSlots(in *input, v ksView, rep *Report) (string, string) {
	if len(v.nodes) < 2 {
		return StatusNoData, "not a cluster (or one primary): nothing to spread over"
	}
	var total, top int64
	topNode := ""
	for _, n := range v.nodes {
		total += n.Keys
		if n.Keys > top {
			top, topNode = n.Keys, n.Node
		}
	}
	if total < 100 {
		return StatusNoData, fmt.Sprintf("only %d keys: too few to judge their spread", total)
	}
	fair := total / int64(len(v.nodes))
	if top*10 < total*8 || top < 2*fair {
		return StatusOK, ""
	}
	ev := []string{fmt.Sprintf("%s of %s keys (%d%%) on %s (slots %s); %d primaries", count(top), count(total), top*100/total,
		inspect.Sanitize(topNode), slotsOf(v.nodes, topNode), len(v.nodes))}
	if v.rep != nil {
		for _, name := range v.rep.GroupOrder {
			if g := v.rep.Groups[name]; len(g.Top) > 0 {
				ev = append(ev, fmt.Sprintf("top %s: %s with %s records", inspect.Sanitize(name), inspect.Sanitize(string(g.Top[0].Value)), count(g.Top[0].Count)))
			}
		}
	}
	rep.add(Finding{Rule: "cluster-slots", Severity: Warning, Keyspace: v.ks.Name,
		Title:    "the keyspace is concentrated on one cluster node: that node takes every request of it, and its failover loses all of it",
		Evidence: ev, Figures: map[string]int64{"keys": total, "keys_on_busiest_node": top},
		Fix: "drop the hash tag ({…}) from the idempotency key, or tag by request rather than by principal, so keys spread over the slots"})
	return "", ""
}

func slotsOf(nodes []inspect.Coverage, addr string) string {
	for _, n := range nodes {
		if n.Node == addr {
			return n.Slots
		}
	}
	return "?"
}
