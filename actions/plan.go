package actions

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/idemctl/idemctl/actions/audit"
	"github.com/idemctl/idemctl/actions/write"
	"github.com/idemctl/idemctl/inspect"
)

// Request is one write an operator asked for.
type Request struct {
	Kind     write.Kind
	Keyspace *inspect.Keyspace // nil: no keyspace matched the key (the plan is refused)
	Key      string
	Reason   string
	TTL      TTL     // Mode "": the action's default (retention for fail and reconcile)
	Ref      string  // reconcile: the authoritative system's reference (e.g. the order id)
	Status   int     // replay status (0: the schema's default)
	Response *string // replay response (nil: the schema's default)
	Saw      *Seen   // what the operator saw; nil: what Plan reads now
	By       string  // who is acting (OS user), recorded in the record where the schema allows
	// ExpectState and ExpectFingerprint refuse the write unless the record
	// has them (a state may be stored or canonical).
	ExpectState, ExpectFingerprint string
	// Evidence, when a verify hook's verdict led to this write, is
	// recorded with it in the audit log.
	Evidence *write.Evidence
}

// Plan is a checked request with its before/after diff and its script.
// Only this package fills it: callers read it and hand it to Executor.Apply.
type Plan struct {
	Request
	// Read is the record as classified when the plan was read, at the
	// server time ReadAtMs: the very version the script is pinned to, so a
	// caller that selected it from a scan can check it still qualifies.
	Read *inspect.Record

	Before  write.Snapshot
	After   write.Snapshot
	Changes []write.Change
	Delete  bool
	Refused string // non-empty: why this write cannot run (nothing is sent)
	Outcome write.Outcome
	// UndoNote, set by Executor.Plan, says why this write will not be
	// undoable ("" when it will): both faces show it before confirming.
	UndoNote string

	version  write.Version // the whole record as read, pinned for the script
	unpinned error         // why the version could not be read (ACL): Apply refuses
	comp     string        // the companion key in the version ("" none)
	script   *casScript
	args     []any
	planned  time.Time    // when the record was read: bounds how far its TTL can have counted down
	nowMs    int64        // the server's clock when it was read
	settles  *audit.Entry // an earlier intent of the same run this plan's already_applied closes
	img      imageRead    // the before-image, read with the version
	reverts  *audit.Entry // an undo: the intent of the write it reverts
	entry    *entryPlan   // a pending-entry write (entry.go); nil for a record
}

// imageRead is a before-image as read, or why there is none.
type imageRead struct {
	image *write.Image
	why   string
}

const nowMarker = "\x00now"

// atMarker is a pair value the script replaces with the server time plus
// offset, in a stored timestamp's unit.
func atMarker(unit inspect.TimeUnit, offset time.Duration) string {
	return fmt.Sprintf("\x00at:%s:%d", unit, offset.Milliseconds())
}

// isMarker reports whether a planned value is one the script fills in.
func isMarker(v string) bool { return strings.HasPrefix(v, "\x00") }

// BuildPlan reads the record and checks the request against the schema's
// repair semantics and what the operator saw.
func BuildPlan(ctx context.Context, c redis.UniversalClient, req Request) (*Plan, error) {
	if strings.TrimSpace(req.Reason) == "" {
		return nil, errors.New("a reason is required for every write")
	}
	p := &Plan{Request: req, planned: time.Now()}
	if req.Keyspace == nil {
		p.Refused, p.Outcome = "no keyspace matches this key (check --match/--preset or the config)", write.Refused
		return p, nil
	}
	if lk := req.Keyspace.Schema.Lock; lk != nil {
		if _, isLock := lk.RecordKey(req.Key); isLock {
			return buildLockPlan(ctx, c, req)
		}
	}
	p.comp = companionKey(req.Keyspace, req.Key, false)
	before, d, ver, unread, err := readPinned(ctx, c, req.Keyspace, req.Key, p.comp, &p.img)
	if errors.Is(err, errChanging) {
		p.Refused, p.Outcome = err.Error(), write.Conflict
		return p, nil
	}
	if err != nil {
		return nil, err
	}
	p.Before, p.version, p.unpinned = before, ver, unread
	if !before.Exists {
		p.Refused, p.Outcome = "the key does not exist", write.NotFound
		return p, nil
	}
	p.nowMs = d.ServerTimeMs
	rec := d.Record
	p.Read = &rec
	saw := Seen{State: before.State, Fingerprint: before.Fingerprint}
	if req.Saw != nil {
		saw = *req.Saw
	}
	if why := p.changedSince(saw); why != "" {
		p.Refused, p.Outcome = "the record changed since you saw it: "+why+"; nothing written", write.Conflict
		return p, nil
	}
	if why := p.unexpected(); why != "" {
		p.Refused, p.Outcome = why+": nothing written", write.Conflict
		return p, nil
	}
	if d.Record.Flags.Has(inspect.FlagWrongType) {
		p.Refused, p.Outcome = "the key's type ("+before.Type+") does not match the schema", write.Refused
		return p, nil
	}
	if err := p.compile(d); err != nil {
		p.Refused, p.Outcome = err.Error(), write.Refused
	}
	return p, nil
}

// ReadAtMs is the server's clock when the plan's record was read (0 when
// it was not).
func (p *Plan) ReadAtMs() int64 { return p.nowMs }

// changedSince compares the record read now with what the operator saw.
func (p *Plan) changedSince(saw Seen) string {
	var changed []string
	if saw.State != p.Before.State {
		changed = append(changed, fmt.Sprintf("state %q → %q", inspect.Sanitize(saw.State), inspect.Sanitize(p.Before.State)))
	}
	if saw.Fingerprint != p.Before.Fingerprint {
		changed = append(changed, fmt.Sprintf("fingerprint %q → %q", short(saw.Fingerprint), short(p.Before.Fingerprint)))
	}
	if saw.Version != "" {
		if why := write.DiffShort(saw.Version, p.Before.Version); why != "" {
			changed = append(changed, fmt.Sprintf("version %s → %s: %s", inspect.Sanitize(saw.Version), p.Before.Version, why))
		}
	}
	return strings.Join(changed, ", ")
}

// unexpected checks ExpectState and ExpectFingerprint.
func (p *Plan) unexpected() string {
	b := p.Before
	if st := p.ExpectState; st != "" && st != b.State && !strings.EqualFold(st, b.Canonical) {
		return fmt.Sprintf("expected state %q, the record is %q", inspect.Sanitize(st), inspect.Sanitize(b.State))
	}
	if fp := p.ExpectFingerprint; fp != "" && fp != b.Fingerprint {
		return fmt.Sprintf("expected fingerprint %q, the record has %q", short(fp), short(b.Fingerprint))
	}
	return ""
}

func short(s string) string {
	if len(s) > 12 {
		return inspect.Sanitize(s[:12]) + "…"
	}
	return inspect.Sanitize(s)
}

// compile fills the script arguments and the predicted after-state.
func (p *Plan) compile(d *inspect.Detail) error {
	s := p.Keyspace.Schema
	spec, err := p.actionSpec(d.Record.State)
	if err != nil {
		return err
	}
	p.Delete = p.Kind == write.KindExpire && p.TTL.D == 0 || spec.Mode == "delete"
	if err := p.unusedOptions(s, spec); err != nil {
		return err
	}

	mode := "update"
	if p.Delete {
		mode = "delete"
	}
	ttlMode, ttlMs := p.newTTL()

	if !p.Delete && ttlMode == "set" && s.ExpiresOpaque != "" {
		return fmt.Errorf("schema %s: a new TTL would disagree with the record's own expiry (%s); delete it (expire --ttl 0) or keep its TTL", s.Name, s.ExpiresOpaque)
	}
	pairs, err := p.pairs(s, spec)
	if err != nil {
		return err
	}
	if !p.Delete && ttlMode == "set" {
		pairs = append(pairs, p.storedExpiry(s, d, time.Duration(ttlMs)*time.Millisecond)...)
	}
	if s.Codec == inspect.CodecJSON && len(pairs) > 0 {
		if err := cjsonKeeps(d.Fields, pairs); err != nil {
			return err
		}
	}
	g := p.guardOf(d)
	p.script = g.script
	p.args = p.scriptArgs(mode, ttlMode, ttlMs, s.State.Field, g.state, g.fpField, g.fp, pairs)
	_, flat := jsonFields(s, d.Fields)
	p.predict(g.container, flat, pairs, ttlMode, ttlMs)
	return nil
}

// actionSpec checks that the action applies to a record in state canon
// and returns what the schema writes for it; a schema that cannot express
// the action refuses it here, before anything else is checked.
func (p *Plan) actionSpec(canon inspect.State) (inspect.ActionSpec, error) {
	ks := p.Keyspace
	s := ks.Schema
	var spec inspect.ActionSpec
	switch p.Kind {
	case write.KindExpire:
		if p.TTL.Mode != TTLSet {
			return spec, errors.New("expire needs a TTL (0 deletes the record)")
		}
	case write.KindFail:
		if canon != inspect.StateProcessing {
			return spec, fmt.Errorf("force-fail applies to processing records; this one is %s", canon)
		}
		spec = s.Actions.Fail
	case write.KindReconcile:
		if canon == inspect.StateSucceeded || canon == inspect.StateReconciled {
			return spec, fmt.Errorf("the record is already %s", canon)
		}
		spec = s.Actions.Reconcile
		if NeedsRef(p.Kind, ks) && p.Ref == "" {
			return spec, errors.New("reconcile needs --ref: the reference you checked in the authoritative system")
		}
	default:
		return spec, fmt.Errorf("unknown action %q", p.Kind)
	}
	if spec.Mode == "refuse" {
		return spec, fmt.Errorf("schema %s cannot express %s: %s", s.Name, p.Kind, spec.Why)
	}
	return spec, nil
}

// newTTL is what the write does to the key's TTL: "keep" it, or "set" it
// to ms (expire's own TTL, --ttl, or the keyspace's retention). A zero
// TTL on a record the write keeps leaves its TTL alone: set, it would
// delete the record.
func (p *Plan) newTTL() (ttlMode string, ttlMs int64) {
	ttlMode = "keep"
	switch {
	case p.Kind == write.KindExpire:
		ttlMode, ttlMs = "set", p.TTL.D.Milliseconds()
	case p.TTL.Mode == TTLSet:
		ttlMode, ttlMs = "set", p.TTL.D.Milliseconds()
	case p.TTL.Mode == TTLRetention || p.TTL.Mode == "":
		if ks := p.Keyspace; ks.Retention > 0 {
			ttlMode, ttlMs = "set", ks.Retention.Milliseconds()
		}
	}
	if ttlMode == "set" && ttlMs == 0 && !p.Delete {
		ttlMode = "keep"
	}
	return ttlMode, ttlMs
}

// casGuard is what the CAS script checks before it writes: the container
// and its script, and the state and fingerprint the record must still
// have (fpField "": no fingerprint field to check).
type casGuard struct {
	container string
	script    *casScript
	state     string
	fpField   string
	fp        string
}

// guardOf picks the script for the schema's codec and what it checks. A
// raw value has no fields: it is guarded by its head (up to 256 bytes)
// and its length instead.
func (p *Plan) guardOf(d *inspect.Detail) casGuard {
	s := p.Keyspace.Schema
	g := casGuard{container: "hash", script: casHash, state: p.Before.State, fpField: s.Fingerprint, fp: p.Before.Fingerprint}
	switch {
	case s.Codec == inspect.CodecJSON:
		g.container, g.script = "json", casJSON
	case s.Codec == inspect.CodecRaw:
		g.container, g.script = "raw", casRaw
		v := d.Fields[0]
		g.state, g.fp = v.Value, strconv.FormatInt(v.Len, 10)
		if len(g.state) > 256 {
			g.state = g.state[:256]
		}
		g.fpField = ""
	}
	return g
}

// scriptArgs lays out ARGV for the CAS scripts (see scripts.go).
func (p *Plan) scriptArgs(mode, ttlMode string, ttlMs int64, stateField, expState, fpField, expFP string, pairs []string) []any {
	v := p.version
	args := []any{mode, ttlMode, ttlMs, stateField, expState, fpField, expFP, v.Type, v.Content, v.Expiry, v.Companion, len(pairs) / 2}
	for _, x := range pairs {
		args = append(args, x)
	}
	return args
}

// unusedOptions refuses a write that would accept an option and drop it:
// every option lands where the library reads it, or the write is refused.
func (p *Plan) unusedOptions(s *inspect.Schema, spec inspect.ActionSpec) error {
	if p.Kind == write.KindExpire {
		return nil
	}
	var opts []string
	if p.Status != 0 {
		opts = append(opts, "a replay status (--status)")
	}
	if p.Response != nil {
		opts = append(opts, "a replay response (--response)")
	}
	if p.Delete {
		if p.TTL.Mode != "" {
			opts = append(opts, "a TTL (--ttl)")
		}
		if len(opts) > 0 {
			return fmt.Errorf("for schema %s, %s deletes the record (%s): %s would not be stored; drop %s",
				s.Name, p.Kind, spec.Why, strings.Join(opts, " and "), plural(len(opts), "it", "them"))
		}
		return nil
	}
	if p.Status != 0 && (s.Status == "" || s.Codec == inspect.CodecRaw) {
		return fmt.Errorf("schema %s stores no replay status: a status (--status) would be dropped and never replayed; drop it", s.Name)
	}
	if p.Response != nil && s.Response == "" && s.Codec != inspect.CodecRaw {
		return fmt.Errorf("schema %s stores no replay response: a response (--response) would be dropped and never replayed; drop it", s.Name)
	}
	for _, v := range []string{p.Ref, p.Reason, p.By, deref(p.Response)} {
		if isMarker(v) {
			return errors.New("a value may not start with a NUL byte")
		}
	}
	return nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
