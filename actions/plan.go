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
	Keyspace *inspect.Keyspace
	Key      string
	Reason   string
	TTL      TTL
	Ref      string  // reconcile: the authoritative system's reference (e.g. the order id)
	Status   int     // replay status (0: the schema's default)
	Response *string // replay response (nil: the schema's default)
	Saw      *Seen   // what the operator saw; nil: what Plan reads now
	By       string  // who is acting (OS user), recorded in the record where the schema allows
}

// Plan is a checked request with its before/after diff and its script.
type Plan struct {
	Request
	Before  Snapshot
	After   Snapshot
	Changes []Change
	Delete  bool
	Refused string // non-empty: why this write cannot run (nothing is sent)
	Outcome Outcome

	script  *casScript
	args    []any
	planned time.Time // when the record was read: bounds how far its TTL can have counted down
}

const nowMarker = "\x00now"

// Snapshot reads a record (bounded) for a plan or a re-read.
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
		}
		s.Fields[f.Name] = v
	}
	if flat, ok := jsonFields(ks.Schema, d.Fields); ok {
		s.Fields = flat
	}
	return s, &d, nil
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
func setJSONField(fields map[string]string, path, lit string) {
	for k := range fields {
		if k == path || strings.HasPrefix(k, path+".") {
			delete(fields, k)
		}
	}
	for i := strings.IndexByte(path, '.'); i >= 0; i = next(path, i) {
		delete(fields, path[:i])
	}
	if lit == nowMarker {
		fields[path] = "(server time, ms)"
		return
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

// BuildPlan reads the record and checks the request against the schema's
// repair semantics and what the operator saw.
func BuildPlan(ctx context.Context, c redis.UniversalClient, req Request) (*Plan, error) {
	if strings.TrimSpace(req.Reason) == "" {
		return nil, errors.New("a reason is required for every write")
	}
	if req.Keyspace == nil {
		return nil, errors.New("no keyspace for key")
	}
	if lk := req.Keyspace.Schema.Lock; lk != nil {
		if _, isLock := lk.RecordKey(req.Key); isLock {
			return buildLockPlan(ctx, c, req)
		}
	}
	p := &Plan{Request: req, planned: time.Now()}
	before, d, err := readSnapshot(ctx, c, req.Keyspace, req.Key)
	if err != nil {
		return nil, err
	}
	p.Before = before
	if !before.Exists {
		p.Refused, p.Outcome = "the key does not exist", NotFound
		return p, nil
	}
	saw := Seen{State: before.State, Fingerprint: before.Fingerprint}
	if req.Saw != nil {
		saw = *req.Saw
		var changed []string
		if saw.State != before.State {
			changed = append(changed, fmt.Sprintf("state %q → %q", inspect.Sanitize(saw.State), inspect.Sanitize(before.State)))
		}
		if saw.Fingerprint != before.Fingerprint {
			changed = append(changed, fmt.Sprintf("fingerprint %q → %q", short(saw.Fingerprint), short(before.Fingerprint)))
		}
		if changed != nil {
			p.Refused, p.Outcome = "the record changed since you saw it: "+strings.Join(changed, ", ")+"; nothing written", Conflict
			return p, nil
		}
	}
	if d.Record.Flags.Has(inspect.FlagWrongType) {
		p.Refused, p.Outcome = "the key's type ("+before.Type+") does not match the schema", Refused
		return p, nil
	}
	if err := p.compile(d, saw); err != nil {
		p.Refused, p.Outcome = err.Error(), Refused
	}
	return p, nil
}

func short(s string) string {
	if len(s) > 12 {
		return inspect.Sanitize(s[:12]) + "…"
	}
	return inspect.Sanitize(s)
}

// compile fills the script arguments and the predicted after-state.
func (p *Plan) compile(d *inspect.Detail, saw Seen) error {
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
		if spec.Ref != "" && p.Ref == "" {
			return errors.New("reconcile needs --ref: the reference you checked in the authoritative system")
		}
	default:
		return fmt.Errorf("unknown action %q", p.Kind)
	}
	if spec.Mode == "refuse" {
		return fmt.Errorf("schema %s cannot express %s: %s", s.Name, p.Kind, spec.Why)
	}
	p.Delete = p.Kind == KindExpire && p.TTL.D == 0 || spec.Mode == "delete"

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

	pairs, err := p.pairs(s, spec, canon)
	if err != nil {
		return err
	}
	if s.Codec == inspect.CodecJSON && len(pairs) > 0 {
		if err := cjsonKeeps(d.Fields, pairs); err != nil {
			return err
		}
	}
	container := "hash"
	p.script = casHash
	expState, expLen := saw.State, ""
	switch {
	case s.Codec == inspect.CodecJSON:
		container, p.script = "json", casJSON
	case s.Codec == inspect.CodecRaw:
		container, p.script = "raw", casRaw
		v := d.Fields[0]
		expState, expLen = v.Value, strconv.FormatInt(v.Len, 10)
		if len(expState) > 256 {
			expState = expState[:256]
		}
	}
	p.args = []any{mode, ttlMode, ttlMs, s.State.Field, expState, s.Fingerprint, saw.Fingerprint}
	if container == "raw" {
		p.args[6] = expLen
	}
	p.args = append(p.args, len(pairs)/2)
	for _, v := range pairs {
		p.args = append(p.args, v)
	}
	_, flat := jsonFields(s, d.Fields)
	p.predict(container, flat, pairs, ttlMode, ttlMs)
	return nil
}

// pairs lists the field/value pairs the action writes.
func (p *Plan) pairs(s *inspect.Schema, spec inspect.ActionSpec, canon inspect.State) ([]string, error) {
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
	out := []string{s.State.Field, lit(state)}
	if s.Status != "" && status != 0 {
		v := strconv.Itoa(status)
		if !jsonVal {
			out = append(out, s.Status, v)
		} else {
			out = append(out, s.Status, v) // a JSON number
		}
	}
	if s.Response != "" && response != nil {
		if jsonVal && json.Valid([]byte(*response)) {
			out = append(out, s.Response, *response) // keep structured responses structured
		} else {
			out = append(out, s.Response, lit(*response))
		}
	}
	add := func(field, v string) {
		if field != "" {
			out = append(out, field, v)
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
			setJSONField(a.Fields, f, v)
		}
		if container == "json" && v != nowMarker {
			var s string
			if json.Unmarshal([]byte(v), &s) == nil {
				v = s
			}
		}
		if v == nowMarker {
			v = "(server time, ms)"
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
		ch = append(ch, Change{Field: "(ttl)", Before: ttlText(b.TTLms), After: ttlText(a.TTLms)})
	}
	p.Changes = ch
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

func ttlText(ms int64) string {
	switch {
	case ms == -1:
		return "none"
	case ms < 0:
		return "gone"
	}
	return units.FormatMs(ms)
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
		if pairs[i] != nowMarker {
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
				"writing this record would corrupt it; expire it instead, or repair it by hand", where)
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
// guarded by its value and length.
func buildLockPlan(ctx context.Context, c redis.UniversalClient, req Request) (*Plan, error) {
	p := &Plan{Request: req, planned: time.Now()}
	pipe := c.Pipeline()
	val := pipe.GetRange(ctx, req.Key, 0, 255)
	n := pipe.StrLen(ctx, req.Key)
	ttl := pipe.PTTL(ctx, req.Key)
	typ := pipe.Type(ctx, req.Key)
	if _, err := pipe.Exec(ctx); err != nil && !isServerError(err) {
		return nil, err
	}
	if typ.Val() == "none" {
		p.Before, p.Refused, p.Outcome = Snapshot{TTLms: -2}, "the key does not exist", NotFound
		return p, nil
	}
	ms := ttl.Val().Milliseconds()
	if ttl.Val() < 0 {
		ms = int64(ttl.Val())
	}
	p.Before = Snapshot{Exists: true, Type: typ.Val(), State: "(lock only)", Canonical: "processing", TTLms: ms,
		Fields: map[string]string{"value": val.Val()}}
	if typ.Val() != "string" {
		p.Refused, p.Outcome = "the lock is a "+typ.Val()+", not a string", Refused
		return p, nil
	}
	if req.Saw != nil && req.Saw.State != "" && req.Saw.State != p.Before.State {
		p.Refused, p.Outcome = "the record changed since you saw it", Conflict
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
	mode, ttlMode, ttlMs := "update", "set", req.TTL.D.Milliseconds()
	if p.Delete {
		mode, ttlMode, ttlMs = "delete", "keep", 0
	}
	p.script = casRaw
	p.args = []any{mode, ttlMode, ttlMs, "", val.Val(), "", strconv.FormatInt(n.Val(), 10), 0}
	p.predict("raw", false, nil, ttlMode, ttlMs)
	if p.Delete {
		p.Changes = []Change{{Field: "(lock)", Before: "held", After: "deleted: the next retry runs"}}
	}
	return p, nil
}
