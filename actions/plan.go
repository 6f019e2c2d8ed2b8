package actions

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/internal/units"
)

// Request is one write an operator asked for.
type Request struct {
	Kind     Kind
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
	Evidence *Evidence
}

// Plan is a checked request with its before/after diff and its script.
// Only this package fills it: callers read it and hand it to Executor.Apply.
type Plan struct {
	Request
	// Read is the record as classified when the plan was read, at the
	// server time ReadAtMs: the very version the script is pinned to, so a
	// caller that selected it from a scan can check it still qualifies.
	Read *inspect.Record

	Before  Snapshot
	After   Snapshot
	Changes []Change
	Delete  bool
	Refused string // non-empty: why this write cannot run (nothing is sent)
	Outcome Outcome
	// UndoNote, set by Executor.Plan, says why this write will not be
	// undoable ("" when it will): both faces show it before confirming.
	UndoNote string

	version  Version // the whole record as read, pinned for the script
	unpinned error   // why the version could not be read (ACL): Apply refuses
	comp     string  // the companion key in the version ("" none)
	script   *casScript
	args     []any
	planned  time.Time   // when the record was read: bounds how far its TTL can have counted down
	nowMs    int64       // the server's clock when it was read
	settles  *AuditEntry // an earlier intent of the same run this plan's already_applied closes
	img      imageRead   // the before-image, read with the version
	reverts  *AuditEntry // an undo: the intent of the write it reverts
}

// imageRead is a before-image as read, or why there is none.
type imageRead struct {
	image *Image
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

// readSnapshot reads a record (bounded) for a plan or a re-read.
func readSnapshot(ctx context.Context, c redis.UniversalClient, ks *inspect.Keyspace, key string) (Snapshot, *inspect.Detail, error) {
	d, err := inspect.FetchDetail(ctx, c, ks, key)
	if errors.Is(err, inspect.ErrNotFound) {
		return Snapshot{TTLms: -2}, nil, nil
	}
	if err != nil {
		return Snapshot{}, nil, err
	}
	r := d.Record
	s := Snapshot{Exists: true, Type: r.Type.String(), State: r.RawState, Canonical: r.State.String(),
		Fingerprint: r.Fingerprint, TTLms: r.TTLms, Fields: map[string]string{}}
	for _, f := range d.Fields {
		v := f.Value
		if f.Truncated {
			v = fmt.Sprintf("‹%d bytes›", f.Len)
			if s.Omitted == nil {
				s.Omitted = map[string]ValueDigest{}
			}
			s.Omitted[f.Name] = ValueDigest{Len: f.Len, Why: whyReadCap}
		}
		s.Fields[f.Name] = v
	}
	if flat, ok := jsonFields(ks.Schema, d.Fields); ok {
		s.Fields = flat
	}
	return s, &d, nil
}

// readPinned reads the record and its version so that the two agree: the
// version is read before and after the snapshot, and a record that changed
// in between is read again. What the operator is shown is then exactly
// what the script will insist on. A user the ACL does not let run scripts
// can still plan (a dry run only reads): the version is then left unread
// and Apply refuses the plan with the reason.
// The second read also takes the record's before-image (fetchImage), into
// img, so an undo restores exactly the version the write is pinned to.
func readPinned(ctx context.Context, c redis.UniversalClient, ks *inspect.Keyspace, key, comp string, img *imageRead) (s Snapshot, d *inspect.Detail, v Version, unread, err error) {
	for range 3 {
		v1, err := fetchVersion(ctx, c, key, comp)
		if refusedScript(err) {
			s, d, serr := readSnapshot(ctx, c, ks, key)
			return s, d, Version{}, err, serr
		}
		if err != nil {
			return s, nil, v, nil, err
		}
		s, d, err = readSnapshot(ctx, c, ks, key)
		if err != nil {
			return s, nil, v, nil, err
		}
		v2, im, why, err := fetchImage(ctx, c, key, comp)
		if err != nil {
			return s, nil, v, nil, err
		}
		img.image, img.why = im, why
		if v1 == v2 && (v2.Type == "none") == !s.Exists {
			if s.Exists {
				s.Version = v2.Short()
			}
			return s, d, v2, nil, nil
		}
	}
	return s, nil, v, nil, errChanging
}

// pinImage runs read between two reads of the record's version, the second
// with its before-image, until both agree (at most three times; then
// errChanging): what read saw is then exactly that version.
func pinImage(ctx context.Context, c redis.UniversalClient, key, comp string, read func() error) (Version, imageRead, error) {
	for range 3 {
		v1, err := fetchVersion(ctx, c, key, comp)
		if err != nil {
			return v1, imageRead{}, err
		}
		if err := read(); err != nil {
			return v1, imageRead{}, err
		}
		v2, im, why, err := fetchImage(ctx, c, key, comp)
		if err != nil {
			return v2, imageRead{}, err
		}
		if v1 == v2 {
			return v2, imageRead{im, why}, nil
		}
	}
	return Version{}, imageRead{}, errChanging
}

// errChanging: the record changed between every two reads of its version.
var errChanging = errors.New("the record changed while it was being read, three times over: the application is writing it right now; nothing written")

// refusedScript reports an ACL refusal to run the version script.
func refusedScript(err error) bool {
	return err != nil && isServerError(err) && (strings.HasPrefix(err.Error(), "NOPERM") || scriptACLRefusal(err.Error()))
}

// jsonFields lists a JSON record's values by dot path, the way its schema
// and the JSON script name fields, so diffs and re-reads compare the fields
// a write changes rather than the whole re-encoded document. It declines
// values cut by the read cap and values that are not a JSON object.
func jsonFields(s *inspect.Schema, fs []inspect.Field) (map[string]string, bool) {
	if s.Codec != inspect.CodecJSON || len(fs) != 1 || fs[0].Truncated {
		return nil, false
	}
	dec := json.NewDecoder(strings.NewReader(fs[0].Value))
	dec.UseNumber()
	var doc map[string]any
	if err := dec.Decode(&doc); err != nil || doc == nil {
		return nil, false
	}
	out := map[string]string{}
	flattenJSON(out, "", doc)
	return out, true
}

// flattenJSON adds v's leaves under prefix: strings unquoted, other values
// as JSON; objects are descended into, empty ones kept as {}.
func flattenJSON(out map[string]string, prefix string, v any) {
	if m, ok := v.(map[string]any); ok && (len(m) > 0 || prefix == "") {
		for k, sub := range m {
			if prefix != "" {
				k = prefix + "." + k
			}
			flattenJSON(out, k, sub)
		}
		return
	}
	if str, ok := v.(string); ok {
		out[prefix] = str
		return
	}
	b, _ := json.Marshal(v)
	out[prefix] = string(b)
}

// setJSONField predicts what the JSON script's set(path, literal) does to
// flattened fields: the path's old value (and anything below it) is
// replaced, and a non-object on the way becomes an object.
func setJSONField(fields map[string]string, path, lit string, nowMs int64) {
	for k := range fields {
		if k == path || strings.HasPrefix(k, path+".") {
			delete(fields, k)
		}
	}
	for i := strings.IndexByte(path, '.'); i >= 0; i = next(path, i) {
		delete(fields, path[:i])
	}
	if isMarker(lit) {
		fields[path] = markerText(lit, nowMs)
		return
	}
	if lit == "null" {
		return // the script removes the path
	}
	dec := json.NewDecoder(strings.NewReader(lit))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		fields[path] = lit
		return
	}
	flattenJSON(fields, path, v)
}

func next(s string, i int) int {
	if j := strings.IndexByte(s[i+1:], '.'); j >= 0 {
		return i + 1 + j
	}
	return -1
}

// markerText shows a value the script fills in, estimated from the
// server's clock when the record was read. Re-reads skip values shown
// this way (see sameOutcome): their exact value is the script's.
func markerText(v string, nowMs int64) string {
	if v == nowMarker {
		return "(server time, ms)"
	}
	unit, offText, _ := strings.Cut(strings.TrimPrefix(v, "\x00at:"), ":") // see atMarker
	off, err := strconv.ParseInt(offText, 10, 64)
	if err != nil {
		return "(server time)"
	}
	at := nowMs + off
	var est string
	switch inspect.TimeUnit(unit) {
	case inspect.UnitSeconds:
		est = strconv.FormatInt(at/1000, 10)
	case inspect.UnitMillis:
		est = strconv.FormatInt(at, 10)
	case inspect.UnitFloatSeconds:
		est = strconv.FormatFloat(float64(at)/1000, 'f', 3, 64)
	default:
		est = time.UnixMilli(at).UTC().Format("2006-01-02T15:04:05.000Z")
	}
	return fmt.Sprintf("(server time + %s ≈ %s)", units.FormatMs(off), est)
}

// BuildPlan reads the record and checks the request against the schema's
// repair semantics and what the operator saw.
func BuildPlan(ctx context.Context, c redis.UniversalClient, req Request) (*Plan, error) {
	if strings.TrimSpace(req.Reason) == "" {
		return nil, errors.New("a reason is required for every write")
	}
	p := &Plan{Request: req, planned: time.Now()}
	if req.Keyspace == nil {
		p.Refused, p.Outcome = "no keyspace matches this key (check --match/--preset or the config)", Refused
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
		p.Refused, p.Outcome = err.Error(), Conflict
		return p, nil
	}
	if err != nil {
		return nil, err
	}
	p.Before, p.version, p.unpinned = before, ver, unread
	if !before.Exists {
		p.Refused, p.Outcome = "the key does not exist", NotFound
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
		p.Refused, p.Outcome = "the record changed since you saw it: "+why+"; nothing written", Conflict
		return p, nil
	}
	if why := p.unexpected(); why != "" {
		p.Refused, p.Outcome = why+": nothing written", Conflict
		return p, nil
	}
	if d.Record.Flags.Has(inspect.FlagWrongType) {
		p.Refused, p.Outcome = "the key's type ("+before.Type+") does not match the schema", Refused
		return p, nil
	}
	if err := p.compile(d); err != nil {
		p.Refused, p.Outcome = err.Error(), Refused
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
		if why := diffShort(saw.Version, p.Before.Version); why != "" {
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
	ks := p.Keyspace
	s := ks.Schema
	canon := d.Record.State
	var spec inspect.ActionSpec
	switch p.Kind {
	case KindExpire:
		if p.TTL.Mode != TTLSet {
			return errors.New("expire needs a TTL (0 deletes the record)")
		}
	case KindFail:
		if canon != inspect.StateProcessing {
			return fmt.Errorf("force-fail applies to processing records; this one is %s", canon)
		}
		spec = s.Actions.Fail
	case KindReconcile:
		if canon == inspect.StateSucceeded || canon == inspect.StateReconciled {
			return fmt.Errorf("the record is already %s", canon)
		}
		spec = s.Actions.Reconcile
		if NeedsRef(p.Kind, ks) && p.Ref == "" {
			return errors.New("reconcile needs --ref: the reference you checked in the authoritative system")
		}
	default:
		return fmt.Errorf("unknown action %q", p.Kind)
	}
	if spec.Mode == "refuse" {
		return fmt.Errorf("schema %s cannot express %s: %s", s.Name, p.Kind, spec.Why)
	}
	p.Delete = p.Kind == KindExpire && p.TTL.D == 0 || spec.Mode == "delete"
	if err := p.unusedOptions(s, spec); err != nil {
		return err
	}

	mode, ttlMode, ttlMs := "update", "keep", int64(0)
	if p.Delete {
		mode = "delete"
	}
	switch {
	case p.Kind == KindExpire:
		ttlMode, ttlMs = "set", p.TTL.D.Milliseconds()
	case p.TTL.Mode == TTLSet:
		ttlMode, ttlMs = "set", p.TTL.D.Milliseconds()
	case p.TTL.Mode == TTLRetention || p.TTL.Mode == "":
		if ks.Retention > 0 {
			ttlMode, ttlMs = "set", ks.Retention.Milliseconds()
		}
	}
	if ttlMode == "set" && ttlMs == 0 && !p.Delete {
		ttlMode = "keep"
	}

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
	container := "hash"
	p.script = casHash
	expState, expFP := p.Before.State, p.Before.Fingerprint
	switch {
	case s.Codec == inspect.CodecJSON:
		container, p.script = "json", casJSON
	case s.Codec == inspect.CodecRaw:
		container, p.script = "raw", casRaw
		v := d.Fields[0]
		expState, expFP = v.Value, strconv.FormatInt(v.Len, 10)
		if len(expState) > 256 {
			expState = expState[:256]
		}
	}
	fpField := s.Fingerprint
	if container == "raw" {
		fpField = ""
	}
	p.args = p.scriptArgs(mode, ttlMode, ttlMs, s.State.Field, expState, fpField, expFP, pairs)
	_, flat := jsonFields(s, d.Fields)
	p.predict(container, flat, pairs, ttlMode, ttlMs)
	return nil
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
	if p.Kind == KindExpire {
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

// storedExpiry keeps a schema's own expiry in step with a TTL the write
// sets: a library that reads its stored expiry (Powertools expiration,
// gopotency ExpiresAt) would otherwise treat the record as gone at the old
// time whatever its Redis TTL says. A stored processing deadline later than
// the new expiry is brought down to it: a record cannot stay in progress
// past its own end. An earlier deadline is left alone, so extending the
// life of a stuck in-progress record does not block its retries longer.
func (p *Plan) storedExpiry(s *inspect.Schema, d *inspect.Detail, ttl time.Duration) []string {
	var out []string
	if s.Expires != nil && p.hasField(s.Expires.Field) {
		out = append(out, s.Expires.Field, atMarker(s.Expires.Unit, ttl))
	}
	if s.Deadline != nil && d.Record.DeadlineMs > 0 && d.Record.DeadlineMs > p.nowMs+ttl.Milliseconds() {
		out = append(out, s.Deadline.Field, atMarker(s.Deadline.Unit, ttl))
	}
	return out
}

// hasField reports whether the record as read holds a field (or dot path);
// a value too large to read whole may hold it.
func (p *Plan) hasField(name string) bool {
	if _, ok := p.Before.Fields[name]; ok {
		return true
	}
	v, ok := p.Before.Fields["value"]
	return ok && strings.HasPrefix(v, "‹")
}

// pairs lists the field/value pairs the action writes.
func (p *Plan) pairs(s *inspect.Schema, spec inspect.ActionSpec) ([]string, error) {
	if p.Kind == KindExpire || p.Delete {
		return nil, nil
	}
	target := inspect.StateFailed
	if p.Kind == KindReconcile {
		target = inspect.StateSucceeded
	}
	state := spec.State
	if state == "" {
		if vals := s.StoredStates(target); len(vals) > 0 {
			state = vals[0]
		} else {
			return nil, fmt.Errorf("schema %s has no stored value for %s: set actions.%s.state", s.Name, target, p.Kind)
		}
	}
	status := p.Status
	if status == 0 {
		status = spec.Status
	}
	var response *string
	if p.Response != nil {
		response = p.Response
	} else if spec.Response != "" {
		r := spec.Response
		response = &r
	} else if p.Kind == KindReconcile && s.Response != "" {
		b, _ := json.Marshal(map[string]any{"reconciled": true, "ref": p.Ref})
		r := string(b)
		response = &r
	}
	if s.Codec == inspect.CodecRaw {
		v := state
		if response != nil {
			v = *response // the bare pattern stores the response as the value
		}
		return []string{"value", v}, nil
	}
	jsonVal := s.Codec == inspect.CodecJSON
	lit := func(v string) string {
		if !jsonVal {
			return v
		}
		b, _ := json.Marshal(v)
		return string(b)
	}
	var out []string
	add := func(field, v string) {
		if field == "" {
			return
		}
		for i := 0; i < len(out); i += 2 {
			if out[i] == field { // two roles share one field: the later wins
				out[i+1] = v
				return
			}
		}
		out = append(out, field, v)
	}
	set := make([]string, 0, len(spec.Set))
	for k := range spec.Set {
		set = append(set, k)
	}
	sort.Strings(set)
	for _, k := range set {
		add(k, spec.Set[k])
	}
	add(s.State.Field, lit(state))
	if s.Status != "" && status != 0 {
		add(s.Status, strconv.Itoa(status)) // a number in JSON too
	}
	if s.Response != "" && response != nil {
		if jsonVal && json.Valid([]byte(*response)) {
			add(s.Response, *response) // keep structured responses structured
		} else {
			add(s.Response, lit(*response))
		}
	}
	add(spec.At, nowMarker)
	add(spec.By, lit(p.By))
	add(spec.Reason, lit(p.Reason))
	if p.Kind == KindReconcile {
		add(spec.Ref, lit(p.Ref))
	}
	return out, nil
}

// predict computes the after-snapshot and the diff shown for confirmation.
func (p *Plan) predict(container string, flat bool, pairs []string, ttlMode string, ttlMs int64) {
	b := p.Before
	a := Snapshot{Exists: !p.Delete, Type: b.Type, State: b.State, Canonical: b.Canonical,
		Fingerprint: b.Fingerprint, TTLms: b.TTLms, Fields: map[string]string{}}
	for k, v := range b.Fields {
		a.Fields[k] = v
	}
	if p.Delete {
		a = Snapshot{TTLms: -2}
		p.After = a
		p.Changes = []Change{{Field: "(key)", Before: "exists", After: "deleted"}}
		return
	}
	if ttlMode == "set" {
		a.TTLms = ttlMs
		if ttlMs == 0 {
			a.TTLms = -1
		}
	}
	for i := 0; i+1 < len(pairs); i += 2 {
		f, v := pairs[i], pairs[i+1]
		if flat {
			setJSONField(a.Fields, f, v, p.nowMs)
		}
		if isMarker(v) {
			v = markerText(v, p.nowMs)
		} else if container == "json" {
			var s string
			if json.Unmarshal([]byte(v), &s) == nil {
				v = s
			}
		}
		if !flat {
			a.Fields[f] = v
		}
		if f == p.Keyspace.Schema.State.Field || container == "raw" {
			a.State = v
		}
	}
	if st, ok := p.Keyspace.Schema.CanonicalOf(a.State); ok {
		a.Canonical = st.String()
	}
	p.After = a
	p.Changes = diffSnapshots(b, a)
}

// diffSnapshots lists what differs from b to a: fields by name, then the
// TTL.
func diffSnapshots(b, a Snapshot) []Change {
	var ch []Change
	keys := map[string]bool{}
	for k := range a.Fields {
		keys[k] = true
	}
	for k := range b.Fields {
		keys[k] = true
	}
	names := make([]string, 0, len(keys))
	for k := range keys {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		if b.Fields[k] != a.Fields[k] {
			ch = append(ch, Change{Field: k, Before: orNone(b.Fields[k]), After: orNone(a.Fields[k])})
		}
	}
	if a.TTLms != b.TTLms {
		ch = append(ch, Change{Field: "(ttl)", Before: units.FormatTTL(b.TTLms), After: units.FormatTTL(a.TTLms)})
	}
	return ch
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// cjsonKeeps refuses a JSON write that would damage the record. The JSON
// script decodes and re-encodes the whole document with the server's cjson,
// which prints numbers with 14 significant digits (a microsecond timestamp
// or a 64-bit id would be silently rounded) and turns an empty array into
// an object. A value cut by the read cap cannot be checked here.
func cjsonKeeps(fs []inspect.Field, pairs []string) error {
	var docs []string
	if len(fs) == 1 && !fs[0].Truncated {
		docs = append(docs, fs[0].Value)
	}
	for i := 1; i < len(pairs); i += 2 {
		if !isMarker(pairs[i]) {
			docs = append(docs, pairs[i])
		}
	}
	for _, doc := range docs {
		dec := json.NewDecoder(strings.NewReader(doc))
		dec.UseNumber()
		var v any
		if dec.Decode(&v) != nil {
			continue // not JSON: the script refuses it itself
		}
		if where, ok := cjsonRewrites("", v); ok {
			return fmt.Errorf("the server's JSON encoder would rewrite %s (cjson keeps 14 significant digits and turns [] into {}): "+
				"writing this record would corrupt it; delete it (expire --ttl 0) instead, or repair it by hand", where)
		}
	}
	return nil
}

// cjsonRewrites finds a value cjson would not write back as it was.
func cjsonRewrites(path string, v any) (string, bool) {
	switch x := v.(type) {
	case json.Number:
		if significantDigits(string(x)) > 14 {
			return orRoot(path) + " = " + string(x), true
		}
	case []any:
		if len(x) == 0 {
			return orRoot(path) + " = []", true
		}
		for i, e := range x {
			if w, ok := cjsonRewrites(fmt.Sprintf("%s[%d]", path, i), e); ok {
				return w, true
			}
		}
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			sub := k
			if path != "" {
				sub = path + "." + k
			}
			if w, ok := cjsonRewrites(sub, x[k]); ok {
				return w, true
			}
		}
	}
	return "", false
}

func orRoot(path string) string {
	if path == "" {
		return "the value"
	}
	return inspect.Sanitize(path)
}

// significantDigits counts a JSON number's significant decimal digits.
func significantDigits(num string) int {
	if i := strings.IndexAny(num, "eE"); i >= 0 {
		num = num[:i]
	}
	digits := strings.Map(func(r rune) rune {
		if r >= '0' && r <= '9' {
			return r
		}
		return -1
	}, num)
	return len(strings.TrimRight(strings.TrimLeft(digits, "0"), "0"))
}

// buildLockPlan repairs a lock with no record (an in-flight or abandoned
// request in marker+lock formats): it can only be given a TTL or deleted,
// guarded by its value and length, its version, and the record still not
// existing (the record is the lock's companion).
func buildLockPlan(ctx context.Context, c redis.UniversalClient, req Request) (*Plan, error) {
	p := &Plan{Request: req, planned: time.Now()}
	p.comp = companionKey(req.Keyspace, req.Key, true)
	var val, n string
	v, img, err := pinImage(ctx, c, req.Key, p.comp, func() error {
		pipe := c.Pipeline()
		valCmd := pipe.GetRange(ctx, req.Key, 0, 255)
		nCmd := pipe.StrLen(ctx, req.Key)
		ttl := pipe.PTTL(ctx, req.Key)
		typ := pipe.Type(ctx, req.Key)
		now := pipe.Time(ctx)
		if _, err := pipe.Exec(ctx); err != nil && !isServerError(err) {
			return err
		}
		p.nowMs = now.Val().UnixMilli()
		p.Before = Snapshot{TTLms: -2}
		if typ.Val() != "none" {
			ms := ttl.Val().Milliseconds()
			if ttl.Val() < 0 {
				ms = int64(ttl.Val())
			}
			val, n = valCmd.Val(), strconv.FormatInt(nCmd.Val(), 10)
			p.Before = Snapshot{Exists: true, Type: typ.Val(), State: "(lock only)", Canonical: "processing", TTLms: ms,
				Fields: map[string]string{"value": val}}
		}
		return nil
	})
	if errors.Is(err, errChanging) {
		p.Refused, p.Outcome = err.Error(), Conflict
		return p, nil
	}
	if err != nil {
		return nil, err
	}
	p.version, p.img = v, img
	if !p.Before.Exists {
		p.Refused, p.Outcome = "the key does not exist", NotFound
		return p, nil
	}
	p.Before.Version = v.Short()
	if p.Before.Type != "string" {
		p.Refused, p.Outcome = "the lock is a "+p.Before.Type+", not a string", Refused
		return p, nil
	}
	if p.version.Companion != "none" {
		p.Refused, p.Outcome = "the record beside this lock exists now: the request completed; nothing written", Conflict
		return p, nil
	}
	if req.Saw != nil {
		var why []string
		if req.Saw.State != "" && req.Saw.State != p.Before.State {
			why = append(why, "state "+strconv.Quote(inspect.Sanitize(req.Saw.State))+" → "+strconv.Quote(p.Before.State))
		}
		if req.Saw.Version != "" {
			if d := diffShort(req.Saw.Version, p.Before.Version); d != "" {
				why = append(why, "version "+inspect.Sanitize(req.Saw.Version)+" → "+p.Before.Version+": "+d)
			}
		}
		if len(why) > 0 {
			p.Refused, p.Outcome = "the record changed since you saw it: "+strings.Join(why, ", ")+"; nothing written", Conflict
			return p, nil
		}
	}
	if why := p.unexpected(); why != "" {
		p.Refused, p.Outcome = why+": nothing written", Conflict
		return p, nil
	}
	if req.Kind == KindReconcile {
		p.Refused, p.Outcome = "a lock has no record to reconcile: delete it (fail or expire --ttl 0) once the source of truth is checked", Refused
		return p, nil
	}
	if req.Kind == KindExpire && req.TTL.Mode != TTLSet {
		p.Refused, p.Outcome = "expire needs a TTL (0 deletes the lock)", Refused
		return p, nil
	}
	p.Delete = req.Kind == KindFail || req.TTL.D == 0
	if req.Kind == KindFail {
		if err := p.unusedOptions(req.Keyspace.Schema, inspect.ActionSpec{Why: "a lone lock is deleted"}); err != nil {
			p.Refused, p.Outcome = err.Error(), Refused
			return p, nil
		}
	}
	mode, ttlMode, ttlMs := "update", "set", req.TTL.D.Milliseconds()
	if p.Delete {
		mode, ttlMode, ttlMs = "delete", "keep", 0
	}
	p.script = casRaw
	p.args = p.scriptArgs(mode, ttlMode, ttlMs, "", val, "", n, nil)
	p.predict("raw", false, nil, ttlMode, ttlMs)
	if p.Delete {
		p.Changes = []Change{{Field: "(lock)", Before: "held", After: "deleted: the next retry runs"}}
	}
	return p, nil
}
