package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/idemctl/idemctl/actions"
	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/inspect/lookup"
	"github.com/idemctl/idemctl/internal/units"
)

// findResult is what find prints: the derivation, the record under its
// key (nil: none), the verdict and the guarded command that fits.
type findResult struct {
	ks      *inspect.Keyspace
	d       *lookup.Derivation
	rec     *inspect.Record
	verdict lookup.Verdict
	next    string // the command, or "" with why in note
	note    string
}

func (r *findResult) print(a *app, format string) error {
	if format == "json" {
		return r.printJSON(a)
	}
	w := newRecordWriter("table", a.stdout)
	if r.rec != nil {
		w.write(r.rec)
	} else {
		fmt.Fprintf(w.w, "%-11s %8s %8s %8s %6s %-12s %-24s %s\n", "-", "-", "-", "-", "-", "-", "-", inspect.Sanitize(r.d.Key))
	}
	fmt.Fprintf(w.w, "\nkey:     %s (%s, from %s)\n", inspect.Sanitize(r.d.Key), r.d.Library, r.d.InputNames())
	if h := r.d.Fingerprint; h != nil {
		fmt.Fprintf(w.w, "request: %s %s of %s\n", h.Algorithm, h.Value, inspect.Sanitize(clipText(h.Canonical, 120)))
	}
	for _, n := range r.d.Notes {
		fmt.Fprintf(w.w, "note:    %s\n", inspect.Sanitize(n))
	}
	fmt.Fprintf(w.w, "verdict: %s\n", r.verdict.Line)
	if r.next != "" {
		fmt.Fprintf(w.w, "\n%s\n", r.next)
	} else if r.note != "" {
		fmt.Fprintf(w.w, "\n%s\n", r.note)
	}
	return w.close()
}

func (r *findResult) printJSON(a *app) error {
	out := struct {
		Keyspace   string             `json:"keyspace"`
		Derivation *lookup.Derivation `json:"derivation"`
		Record     json.RawMessage    `json:"record"`
		Verdict    lookup.Verdict     `json:"verdict"`
		Next       string             `json:"next,omitempty"`
		Note       string             `json:"note,omitempty"`
	}{Keyspace: r.ks.Name, Derivation: r.d, Record: json.RawMessage("null"), Verdict: r.verdict, Next: r.next, Note: r.note}
	if r.rec != nil {
		out.Record = inspect.AppendJSON(nil, r.rec)
	}
	enc := json.NewEncoder(a.stdout)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

func clipText(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// repairFor picks the write that fits the record: none for a request
// still in flight under its timeout; triage (the verify hook proves what
// happened) or fail for a stuck one; expire --ttl 0 for one that is done,
// so the next retry runs afresh.
func repairFor(r *findResult, hook bool) (cmd, extra, why string) {
	rec := r.rec
	switch {
	case rec.State != inspect.StateProcessing:
		return "expire", " --ttl 0 --reason 'REASON'", "# to let the next retry run afresh (a dry run: add --write to apply):"
	case !rec.Stale() && rec.AgeMs >= 0:
		return "", "", fmt.Sprintf("nothing to repair yet: the request is in flight (%s old, under the processing timeout %s)",
			units.FormatMs(rec.AgeMs), units.FormatMs(r.ks.ProcessingTimeout.Milliseconds()))
	case hook:
		return "triage", "", "# to ask the verify hook whether it happened, then reconcile or fail (a dry run: add --write to apply):"
	}
	return "fail", " --reason 'REASON'", "# to unblock the customer's retries (a dry run: add --write to apply):"
}

// hasVerifyHook reports whether the config gives the keyspace a verify hook.
func hasVerifyHook(s *session, name string) bool { return verifyHook(s.cfg, name) != nil }

// findOnlyFlags are find's own flags and those of a read: not for a write.
var findOnlyFlags = []string{"output", "key", "principal", "method", "path", "capture", "request", "event",
	"function", "event-key-jmespath", "validation-jmespath", "hash-function", "runtime", "hmac-secret-env", "rdb", "at", "db",
	"count", "no-memory", "max-keys", "keys-per-sec", "in-flight", "response-sizes", "max-nodes", "quiet"}

// nextCommand is the guarded write that fits the verdict, pinned to the
// record as read: fail (or triage, where a verify hook can prove what
// happened) a processing record, expire one that is done so the next
// retry runs afresh. None for a missing record or a different request.
func (o *findCmd) nextCommand(ctx context.Context, s *session, r *findResult) string {
	switch {
	case r.rec == nil:
		r.note = "nothing to repair: the library runs the next retry afresh"
		return ""
	case r.verdict.Kind == lookup.Different:
		r.note = "no write fits: the library refuses this request under this key whatever the record's state; the client must send the original request, or a new key"
		return ""
	}
	cmd, extra, why := repairFor(r, hasVerifyHook(s, r.ks.Name))
	if cmd == "" {
		r.note = why
		return ""
	}
	version := ""
	if s.snap == nil {
		shorts, errs := actions.ReadVersions(ctx, s.client, r.ks, []inspect.Record{*r.rec})
		if errs[0] == nil {
			version = shorts[0]
		}
	}
	var b strings.Builder
	b.WriteString(why + "\n")
	writeFlagsLine(&b, cmd, o.line, s, findOnlyFlags...)
	fmt.Fprintf(&b, "%s --from-file - <<'EOF'\n", extra)
	cols := []string{r.rec.Key, r.rec.RawState, r.rec.Fingerprint}
	if version != "" {
		cols = append(cols, version)
	}
	b.WriteString(actions.TargetLine(cols...) + "\nEOF")
	return b.String()
}
