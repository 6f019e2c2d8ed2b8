package actions

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/idemctl/idemctl/actions/audit"
	"github.com/idemctl/idemctl/actions/write"
	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/internal/units"
)

// Executor runs planned writes under a policy, with an audit trail.
type Executor struct {
	Client   redis.UniversalClient
	Policy   *Policy
	Audit    *audit.Auditor
	Identity audit.Identity
	// Durability is what each batch waits for once written (WAIT).
	Durability Durability

	opened    *audit.Auditor // the log NewExecutor opened, for Close
	auditPath string         // where MarkAlreadyApplied reads earlier runs
	mu        sync.Mutex
	stopped   error        // why the last run stopped early (an audit failure)
	values    audit.Values // the session's, for announcing undoability while planning
}

// Plan reads the record and builds the guarded write for req.
func (e *Executor) Plan(ctx context.Context, req Request) (*Plan, error) {
	if req.By == "" {
		req.By = e.Identity.OSUser
	}
	p, err := BuildPlan(ctx, e.Client, req)
	if err == nil && p.Refused == "" {
		p.UndoNote = undoNote(e.auditValues(), p)
	}
	return p, err
}

// Apply runs one plan, as a run of one (see ApplyAll).
func (e *Executor) Apply(ctx context.Context, p *Plan) Result {
	return e.ApplyAll(ctx, []*Plan{p}, 0, nil)[0]
}

// entry is an audit line about p, its values bounded as the log keeps them.
func (e *Executor) entry(p *Plan, phase, run string) audit.Entry {
	ks := ""
	if p.Keyspace != nil {
		ks = p.Keyspace.Name
	}
	before := p.Before
	en := audit.Entry{ID: audit.NewID(), Phase: phase, Run: run, Identity: e.Identity, Keyspace: ks, Key: p.Key,
		Action: p.Kind, Reason: p.Reason, Before: &before, Changes: p.Changes, Evidence: p.Evidence, Entry: entryAuditOf(p)}
	if p.reverts != nil {
		en.Reverts = p.reverts.ID
	}
	v := e.auditValues()
	if phase == audit.PhaseIntent {
		after := p.After
		en.After = &after
		note := undoNoteOf(v, p)
		ok := note == ""
		en.Undoable, en.UndoNote = &ok, note
		if ok {
			en.Image = p.img.image
		}
	}
	v.Apply(&en, p.Keyspace)
	return en
}

// auditValues is how much of each value the log keeps: the open log's
// setting, or, before it is opened (planning), the session's.
func (e *Executor) auditValues() audit.Values {
	if e.Audit != nil {
		return e.Audit.Values
	}
	return e.values
}

// outcomeOf is the outcome line closing intent (same id). The snapshots
// and the diff stay in the intent alone: a value is never logged twice.
func outcomeOf(intent audit.Entry, res Result) audit.Entry {
	out := intent
	out.Phase, out.Before, out.After, out.Changes, out.Undoable, out.UndoNote = audit.PhaseOutcome, nil, nil, nil, nil, ""
	out.Image = nil
	out.Outcome, out.Detail, out.ServerMs, out.AfterVersion = res.Outcome, res.Detail, res.ServerMs, res.after
	out.Replication = res.Replication
	if res.entry != nil {
		out.Entry = res.entry
	}
	return out
}

// refusalOf is the one line of a write refused before anything was sent:
// no intent (nothing was about to change), the record as read.
func (e *Executor) refusalOf(p *Plan, run string, res Result) audit.Entry {
	out := e.entry(p, audit.PhaseOutcome, run)
	out.Outcome, out.Detail = res.Outcome, res.Detail
	return out
}

// write runs one planned write whose intent is durable: the CAS script,
// and, when the outcome is uncertain (timeout, lost connection), a re-read
// that settles it, never an assumption.
func (e *Executor) write(ctx context.Context, via processor, p *Plan, res Result) Result {
	if p.entry != nil {
		return e.writeEntry(ctx, via, p, res)
	}
	reply, err := e.runScript(ctx, via, p)
	switch {
	case err == nil:
		res.Outcome, res.Detail, res.ServerMs = p.parseReply(reply)
		if res.Outcome == write.Applied && len(reply) >= 6 {
			res.after = &write.Version{Type: reply[2], Content: reply[3], Expiry: reply[4], Companion: reply[5]}
		}
	case isServerError(err):
		res.Outcome, res.Detail = write.Failed, explain(err, e.Identity.RedisUser)
		if strings.HasPrefix(err.Error(), "NOPERM") || scriptACLRefusal(err.Error()) {
			res.Outcome = write.Refused
		}
		if strings.Contains(err.Error(), "@user_script") {
			// The script stopped at a failing call, and Redis keeps what
			// it wrote before that call: only a re-read can say.
			o, d := e.reread(ctx, p)
			res.Detail += "; " + d
			if o != write.NotApplied {
				res.Outcome = o
			}
		}
	default:
		res.Outcome, res.Detail = e.settle(ctx, p, err)
	}
	return res
}

// runScript sends the plan's script over the record and its companion. A
// cluster refuses keys in two slots (CROSSSLOT, before anything runs): the
// companion is then checked apart just before, and the script guards the
// record alone.
func (e *Executor) runScript(ctx context.Context, via processor, p *Plan) ([]string, error) {
	reply, err := p.script.run(ctx, via, scriptKeys(p.Key, p.comp), p.args...).StringSlice()
	if p.comp == "" || !crossSlot(err) {
		return reply, err
	}
	cv, err := fetchVersion(ctx, e.Client, p.comp, "")
	if err != nil {
		return nil, err
	}
	if got := companionDigest(cv); got != p.version.Companion {
		return []string{"conflict", "companion", got}, nil
	}
	args := append([]any{}, p.args...)
	args[10] = "" // ARGV[11]: no companion in KEYS
	return p.script.run(ctx, via, []string{p.Key}, args...).StringSlice()
}

func (p *Plan) parseReply(r []string) (write.Outcome, string, int64) {
	if len(r) == 0 {
		return write.Unknown, "empty reply from the script", 0
	}
	switch r[0] {
	case "applied":
		var ms int64
		if len(r) > 1 {
			ms, _ = strconv.ParseInt(r[1], 10, 64)
		}
		return write.Applied, "", ms
	case "not_found":
		return write.NotFound, "the key no longer exists", 0
	case "conflict":
		what, cur := "record", ""
		if len(r) > 1 {
			what = r[1]
		}
		if len(r) > 2 {
			cur = r[2]
		}
		var why string
		switch what {
		case "state", "fingerprint", "decode":
			why = fmt.Sprintf("%s is now %q", what, inspect.Sanitize(cur))
		default:
			why = p.versionConflict(what, cur)
		}
		return write.Conflict, "the record changed since it was read: " + why + "; nothing was written", 0
	}
	return write.Unknown, "unexpected reply " + inspect.Sanitize(strings.Join(r, " ")), 0
}

// settle re-reads the record after an uncertain failure and says whether
// the write happened, did not, or cannot be told.
func (e *Executor) settle(ctx context.Context, p *Plan, cause error) (write.Outcome, string) {
	o, d := e.reread(ctx, p)
	return o, "uncertain (" + units.OneLine(cause.Error()) + "); " + d
}

// reread compares the record with the plan's before and after snapshots.
func (e *Executor) reread(ctx context.Context, p *Plan) (write.Outcome, string) {
	for attempt := range 5 {
		if attempt > 0 {
			time.Sleep(time.Duration(attempt) * 300 * time.Millisecond)
		}
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 3*time.Second)
		now, _, err := readSnapshot(rctx, e.Client, p.Keyspace, p.Key)
		cancel()
		if err != nil {
			continue
		}
		elapsed := time.Since(p.planned)
		applied := sameOutcome(now, p.After, p.Delete, elapsed)
		unchanged := sameOutcome(now, p.Before, false, elapsed)
		switch {
		case applied && unchanged:
			return write.Unknown, "a re-read cannot tell the planned record from the old one: check it by hand"
		case applied:
			return write.Applied, "a re-read shows the write was applied"
		case unchanged:
			return write.NotApplied, "a re-read shows the record unchanged: the write did not happen"
		default:
			return write.Unknown, "a re-read shows neither the old nor the planned record: check it by hand"
		}
	}
	return write.Unknown, "the record could not be re-read: check it by hand"
}

// sameOutcome compares a re-read with an expected snapshot: existence,
// state, fingerprint, the fields, and the TTL (see ttlFits).
func sameOutcome(now, want write.Snapshot, deleted bool, elapsed time.Duration) bool {
	if deleted {
		return !now.Exists
	}
	if now.Exists != want.Exists || now.State != want.State || now.Fingerprint != want.Fingerprint {
		return false
	}
	for k, v := range want.Fields {
		if strings.HasPrefix(v, "(server time") {
			continue
		}
		if now.Fields[k] != v {
			return false
		}
	}
	return ttlFits(now.TTLms, want.TTLms, elapsed)
}

// ttlFits says whether a TTL read now can be the expected one counted down
// for at most elapsed since the plan. "Set or not" is not enough: an expire
// changes only the TTL, so the TTL alone tells it from the old record.
func ttlFits(now, want int64, elapsed time.Duration) bool {
	if now < 0 || want < 0 { // none, or unreadable
		return now == want
	}
	const slack = 5 // ms of PTTL rounding
	return now <= want+slack && now >= want-elapsed.Milliseconds()-slack
}

func isServerError(err error) bool {
	var re redis.Error
	return errors.As(err, &re)
}

// scriptACLRefusal recognises how the server refuses a command a script
// calls on behalf of a user the ACL does not allow it: Redis says "The user
// executing the script can't run this command", Valkey 8 "ACL failure in
// script: User … has no permissions to run the '…' command".
func scriptACLRefusal(msg string) bool {
	return strings.Contains(msg, "The user executing the script can't run this command") ||
		strings.Contains(msg, "ACL failure in script")
}

// operatorRights is what the write scripts need beyond the read commands:
// Redis checks every command a script calls against the caller's ACL.
const operatorRights = "+evalsha +eval +script|load and the commands the scripts call (+hset +set +del +pexpire +persist, +restore for undo, and the reads +type +exists +get +getrange +strlen +hget +hgetall +hlen +pttl +pexpiretime +time +hkeys +hstrlen +dump), with write access to the keys"

// explain turns a server refusal into what the operator can do about it.
func explain(err error, user string) string {
	msg := units.OneLine(err.Error())
	if user == "" {
		user = "default"
	}
	switch {
	case strings.HasPrefix(msg, "NOPERM"):
		return fmt.Sprintf("%s — the ACL user %q may not run the write scripts; the operator role needs "+
			operatorRights+"; see the ACL roles, docs/acl-roles.md", msg, user)
	case scriptACLRefusal(msg):
		return fmt.Sprintf("%s — the ACL user %q may run the write scripts but not every command they call; the operator role needs "+
			operatorRights, msg, user)
	case strings.HasPrefix(msg, "OOM"):
		return msg + " — Redis is at maxmemory and refuses writes; nothing was written"
	case strings.HasPrefix(msg, "READONLY"):
		return msg + " — this node is a replica; writes must go to the primary"
	}
	return msg
}

// RunStopped is why the last ApplyAll stopped early: the audit log could
// not be written (nil otherwise). Every write it made has a durable
// intent; the ones after the failure were not made.
func (e *Executor) RunStopped() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.stopped
}
