package actions

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/idemctl/idemctl/actions/write"
	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/internal/units"
)

// predict computes the after-snapshot and the diff shown for confirmation.
func (p *Plan) predict(container string, flat bool, pairs []string, ttlMode string, ttlMs int64) {
	b := p.Before
	a := write.Snapshot{Exists: !p.Delete, Type: b.Type, State: b.State, Canonical: b.Canonical,
		Fingerprint: b.Fingerprint, TTLms: b.TTLms, Fields: map[string]string{}}
	for k, v := range b.Fields {
		a.Fields[k] = v
	}
	if p.Delete {
		a = write.Snapshot{TTLms: -2}
		p.After = a
		p.Changes = []write.Change{{Field: "(key)", Before: "exists", After: "deleted"}}
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
func diffSnapshots(b, a write.Snapshot) []write.Change {
	var ch []write.Change
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
			ch = append(ch, write.Change{Field: k, Before: orNone(b.Fields[k]), After: orNone(a.Fields[k])})
		}
	}
	if a.TTLms != b.TTLms {
		ch = append(ch, write.Change{Field: "(ttl)", Before: units.FormatTTL(b.TTLms), After: units.FormatTTL(a.TTLms)})
	}
	return ch
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
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
