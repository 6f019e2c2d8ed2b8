package doctor

import (
	"fmt"

	"github.com/idemctl/idemctl/inspect"
)

// The expiry rules: records that never expire, or expire other than whole
// (no TTL, no in-progress deadline, fields with their own TTLs).

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
