package inspect

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

func mustKeyspace(t testing.TB, preset string, mod func(*KeyspaceSpec)) *Keyspace {
	t.Helper()
	s, err := Preset(preset)
	if err != nil {
		t.Fatal(err)
	}
	sp := KeyspaceSpec{Schema: s}
	if mod != nil {
		mod(&sp)
	}
	ks, err := NewKeyspace(sp)
	if err != nil {
		t.Fatal(err)
	}
	return ks
}

func hashObs(key string, pttl int64, kv map[int]string) *observed {
	o := &observed{key: key, pttl: pttl, mem: 200, typ: TypeHash}
	o.f.respLen = -1
	for slot, v := range kv {
		o.f.val[slot], o.f.has[slot] = v, true
	}
	return o
}

const fp64 = "b04874101dd726b9609fc16e49c2c038726434e702977bef3535c081b9ce7bf5"

func TestClassifyAtlasmart(t *testing.T) {
	ks := mustKeyspace(t, "atlasmart", nil) // reserve 60s, timeout 30s
	key := "atlasmart:ch23:idem:customer-42:POST:/orders:req-1"
	now := int64(1_800_000_000_000)
	cases := []struct {
		name      string
		o         *observed
		state     State
		flags     Flags
		age       int64
		ageSource AgeSource
	}{
		{"fresh processing", hashObs(key, 55_000, map[int]string{slotState: "PROCESSING", slotFingerprint: fp64}),
			StateProcessing, 0, 5_000, AgeTTL},
		{"stale processing", hashObs(key, 20_000, map[int]string{slotState: "PROCESSING", slotFingerprint: fp64}),
			StateProcessing, FlagStale, 40_000, AgeTTL},
		{"processing without TTL", hashObs(key, -1, map[int]string{slotState: "PROCESSING", slotFingerprint: fp64}),
			StateProcessing, FlagNoTTL | FlagProcessingNoTTL, -1, AgeUnknown},
		{"succeeded: TTL is retention, no age", hashObs(key, 250_000, map[int]string{slotState: "SUCCEEDED", slotFingerprint: fp64, slotStatus: "201"}),
			StateSucceeded, 0, -1, AgeUnknown},
		{"state in odd case", hashObs(key, 250_000, map[int]string{slotState: "succeeded", slotFingerprint: fp64}),
			StateSucceeded, 0, -1, AgeUnknown},
		{"unknown state", hashObs(key, 250_000, map[int]string{slotState: "WEIRD", slotFingerprint: fp64}),
			StateUnknown, FlagUnknownState, -1, AgeUnknown},
		// No state at all is not an unknown state: the hash is not a record
		// of this schema (unknown_state counts only stored, unmapped states).
		{"missing state and fingerprint", hashObs(key, 250_000, nil),
			StateUnknown, FlagUndecoded | FlagMissingFingerprint, -1, AgeUnknown},
		{"garbage status", hashObs(key, 250_000, map[int]string{slotState: "SUCCEEDED", slotFingerprint: fp64, slotStatus: "two hundred"}),
			StateSucceeded, FlagDecodeError, -1, AgeUnknown},
		{"TTL above reserve: age unknown", hashObs(key, 90_000, map[int]string{slotState: "PROCESSING", slotFingerprint: fp64}),
			StateProcessing, 0, -1, AgeUnknown},
		{"template mismatch kept", hashObs("atlasmart:ch23:idem:oops", 50_000, map[int]string{slotState: "PROCESSING", slotFingerprint: fp64}),
			StateProcessing, FlagTemplateMismatch, 10_000, AgeTTL},
		{"wrong type", &observed{key: key, pttl: 1000, mem: 50, typ: TypeList, wrongType: true},
			StateUnknown, FlagWrongType | FlagUndecoded, -1, AgeUnknown},
	}
	for _, c := range cases {
		r := classify(ks, c.o, now)
		if r.State != c.state || r.Flags != c.flags || r.AgeMs != c.age || r.AgeSource != c.ageSource {
			t.Errorf("%s: got state=%v flags=%v age=%d src=%v; want %v %v %d %v",
				c.name, r.State, r.Flags, r.AgeMs, r.AgeSource, c.state, c.flags, c.age, c.ageSource)
		}
	}
	r := classify(ks, hashObs(key, 250_000, map[int]string{slotState: "SUCCEEDED", slotFingerprint: fp64, slotStatus: "201"}), now)
	if r.Group("endpoint") != "POST:/orders" || r.Status != 201 || r.Fingerprint != fp64 {
		t.Errorf("got endpoint %q status %d fp %q", r.Group("endpoint"), r.Status, r.Fingerprint)
	}
}

func TestClassifyLargeResponse(t *testing.T) {
	ks := mustKeyspace(t, "atlasmart", func(sp *KeyspaceSpec) { sp.LargeResponse = 1000 })
	o := hashObs("k", 1000, map[int]string{slotState: "SUCCEEDED", slotFingerprint: "x"})
	o.f.respLen = 1001
	if r := classify(ks, o, 0); !r.Flags.Has(FlagLargeResponse) || r.ResponseLen != 1001 {
		t.Fatalf("flags %v len %d", r.Flags, r.ResponseLen)
	}
}

func TestClassifySetnx(t *testing.T) {
	ks := mustKeyspace(t, "setnx", nil) // reserve 1h, timeout 5m
	cases := []struct {
		value string
		pttl  int64
		state State
		flags Flags
		resp  int64
	}{
		{"processing", 3_590_000, StateProcessing, 0, -1},
		{"1", 3_000_000, StateProcessing, FlagStale, -1},
		{"PROCESSING", -1, StateProcessing, FlagNoTTL | FlagProcessingNoTTL, -1},
		{`{"order_id":"ord-1"}`, 3_000_000, StateSucceeded, 0, 20},
		{"", 1000, StateUnknown, FlagUnknownState, -1},
	}
	for _, c := range cases {
		o := &observed{key: "idempotency:order:1", pttl: c.pttl, mem: 60, typ: TypeString, value: c.value, valueLen: int64(len(c.value))}
		r := classify(ks, o, 0)
		if r.State != c.state || r.Flags != c.flags || r.ResponseLen != c.resp {
			t.Errorf("%q: got %v %v resp=%d, want %v %v %d", c.value, r.State, r.Flags, r.ResponseLen, c.state, c.flags, c.resp)
		}
		if r.Fingerprint != "" || r.Flags.Has(FlagMissingFingerprint) {
			t.Errorf("%q: a bare marker has no fingerprint to miss", c.value)
		}
	}
}

const jsonSchema = `
container: string
codec: json
state: {field: status, map: {INPROGRESS: processing, COMPLETED: succeeded}}
fingerprint: validation
response: data
created: {field: meta.created_at, unit: rfc3339}
deadline: {field: in_progress_expiration, unit: ms}
defaults: {match: "x:*", processing_timeout: 60s}
`

func TestClassifyJSONFieldsAndUnits(t *testing.T) {
	s, err := ParseSchemaYAML("custom", []byte(jsonSchema))
	if err != nil {
		t.Fatal(err)
	}
	ks, err := NewKeyspace(KeyspaceSpec{Schema: s})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC).UnixMilli()
	decode := func(v string, cut bool) Record {
		o := &observed{key: "x:1", pttl: 1000, mem: 100, typ: TypeString}
		decodeJSON(s, []byte(v), cut, &o.f)
		o.f.truncated = o.f.truncated || cut
		return classify(ks, o, now)
	}
	r := decode(`{"status":"INPROGRESS","validation":"abc","meta":{"created_at":"2026-12-02T11:58:00Z"},"in_progress_expiration":`+itoa(now+10_000)+`}`, false)
	if r.State != StateProcessing || r.AgeMs != 120_000 || r.AgeSource != AgeField || r.Stale() || r.Fingerprint != "abc" {
		t.Errorf("created: %+v", r)
	}
	r = decode(`{"status":"INPROGRESS","validation":"abc","in_progress_expiration":`+itoa(now-5_000)+`}`, false)
	if !r.Stale() || r.AgeSource != AgeDeadline || r.AgeMs != 65_000 {
		t.Errorf("deadline passed: stale=%v src=%v age=%d", r.Stale(), r.AgeSource, r.AgeMs)
	}
	r = decode(`{"status":"COMPLETED","data":{"a":[1,2,3]},"validation":"v"}`, false)
	if r.State != StateSucceeded || r.ResponseLen != len64(`{"a":[1,2,3]}`) {
		t.Errorf("response: %+v", r)
	}
	r = decode(`{"status":"COMPLETED","validation":"v","data":"xxxxxxxx`, true)
	if r.State != StateSucceeded || !r.Flags.Has(FlagTruncated) || r.Flags.Has(FlagDecodeError) {
		t.Errorf("truncated: state %v flags %v", r.State, r.Flags)
	}
	for _, bad := range []string{`not json`, `[1,2]`, `{"status":`, `{"status":42,"validation":"v"}`} {
		r = decode(bad, false)
		if r.State != StateUnknown {
			t.Errorf("%q: state %v", bad, r.State)
		}
	}
	r = decode(`{"status":"INPROGRESS","validation":"v","meta":{"created_at":"yesterday"}}`, false)
	if !r.Flags.Has(FlagDecodeError) || r.AgeMs != -1 {
		t.Errorf("bad time: %v age %d", r.Flags, r.AgeMs)
	}
}

func TestParseTimeUnits(t *testing.T) {
	cases := []struct {
		v    string
		unit TimeUnit
		want int64
		ok   bool
	}{
		{"1764676800", UnitSeconds, 1764676800000, true},
		{"1764676800123", UnitMillis, 1764676800123, true},
		{"1764676800.5", UnitFloatSeconds, 1764676800500, true},
		{"2025-12-02T12:00:00Z", UnitRFC3339, 1764676800000, true},
		{"2025-12-02T12:00:00.250+01:00", UnitRFC3339, 1764673200250, true},
		{"-5", UnitSeconds, 0, false},
		{"NaN", UnitSeconds, 0, false},
		{"1e300", UnitSeconds, 0, false},
		{"soon", UnitMillis, 0, false},
	}
	for _, c := range cases {
		got, ok := parseTimeMs(c.v, c.unit)
		if ok != c.ok || got != c.want {
			t.Errorf("parseTimeMs(%q, %s) = %d %v, want %d %v", c.v, c.unit, got, ok, c.want, c.ok)
		}
	}
}

func TestSchemaErrors(t *testing.T) {
	bad := map[string]string{
		"unknown key":     "container: hash\nstate: {field: s}\nbogus: 1\n",
		"bad container":   "container: list\nstate: {field: s}\n",
		"no state field":  "container: hash\n",
		"bad unit":        "container: hash\nstate: {field: s}\ncreated: {field: c, unit: weeks}\n",
		"bad canonical":   "container: hash\nstate: {field: s, map: {X: done}}\n",
		"raw with fields": "container: string\ncodec: raw\nfingerprint: f\n",
		"bad duration":    "container: hash\nstate: {field: s}\ndefaults: {processing_timeout: soon}\n",
		"bad template":    "container: hash\nstate: {field: s}\ndefaults: {key_template: 'a:{'}\n",
		"hash with json":  "container: hash\ncodec: json\nstate: {field: s}\n",
	}
	for name, doc := range bad {
		if _, err := ParseSchemaYAML(name, []byte(doc)); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	_, err := ParseSchemaYAML("x", []byte("container: hash\nstate: {field: s}\nbogus: 1\n"))
	if err == nil || !contains(err.Error(), "line 3") {
		t.Errorf("unknown key error should name line 3: %v", err)
	}
}

func itoa(n int64) string         { return strconv.FormatInt(n, 10) }
func len64(s string) int64        { return int64(len(s)) }
func contains(s, sub string) bool { return strings.Contains(s, sub) }

// Two roles may share one field: marker-lock reads the replay's HTTP status
// as both its state (any value: completed) and its status. Before the
// decoder filled every role a path serves, the state was never read.
func TestClassifySharedStateAndStatusPath(t *testing.T) {
	ks := mustKeyspace(t, "marker-lock", nil)
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC).UnixMilli()
	o := &observed{key: "idempotency_keys:abc", pttl: 1000, mem: 100, typ: TypeString}
	decodeJSON(ks.Schema, []byte(`{"status":201,"headers":{},"response":"{\"id\":1}"}`), false, &o.f)
	r := classify(ks, o, now)
	if r.RawState != "201" || r.Status != 201 || r.State != StateSucceeded || r.Flags&(FlagUnknownState|FlagUndecoded|FlagDecodeError) != 0 {
		t.Fatalf("shared path: raw %q status %d state %v flags %v", r.RawState, r.Status, r.State, r.Flags)
	}
}
