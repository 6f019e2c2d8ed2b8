package actions

import (
	"strings"
	"testing"
	"time"

	"github.com/idemctl/idemctl/actions/write"
	"github.com/idemctl/idemctl/internal/testkit/inspecttest"
)

// The one TTL reading both faces use: the CLI's rules.
func TestParseTTL(t *testing.T) {
	for _, c := range []struct {
		kind write.Kind
		in   string
		want TTL
		err  string
	}{
		{write.KindExpire, "", TTL{}, "required for expire"},
		{write.KindExpire, "0", TTL{Mode: TTLSet}, ""},
		{write.KindExpire, "10m", TTL{Mode: TTLSet, D: 10 * time.Minute}, ""},
		{write.KindExpire, "1ms", TTL{Mode: TTLSet, D: time.Millisecond}, ""},
		{write.KindExpire, "500us", TTL{}, "at least 1ms"},
		{write.KindExpire, "keep", TTL{}, "bad duration"},
		{write.KindExpire, "retention", TTL{}, "bad duration"},
		{write.KindExpire, "-5s", TTL{}, "negative"},
		{write.KindFail, "", TTL{}, ""}, // the action's default
		{write.KindFail, "retention", TTL{Mode: TTLRetention}, ""},
		{write.KindFail, "keep", TTL{Mode: TTLKeep}, ""},
		{write.KindFail, "1d", TTL{Mode: TTLSet, D: 24 * time.Hour}, ""},
		{write.KindReconcile, "", TTL{}, ""},
		{write.KindReconcile, "90", TTL{Mode: TTLSet, D: 90 * time.Second}, ""},
		{write.KindReconcile, "1ns", TTL{}, "at least 1ms"},
		{write.KindReconcile, "soon", TTL{}, "bad duration"},
	} {
		got, err := ParseTTL(c.kind, c.in)
		switch {
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%s %q: error %v, want one saying %q", c.kind, c.in, err, c.err)
		case c.err == "" && err != nil:
			t.Errorf("%s %q: %v", c.kind, c.in, err)
		case c.err == "" && got != c.want:
			t.Errorf("%s %q: %+v, want %+v", c.kind, c.in, got, c.want)
		}
	}
}

// A reference is needed exactly where the schema records one, and a plan
// without it is refused for the same reason.
func TestNeedsRef(t *testing.T) {
	for _, c := range []struct {
		preset string
		kind   write.Kind
		want   bool
	}{
		{"atlasmart", write.KindReconcile, true},
		{"gopotency", write.KindReconcile, true},
		{"atlasmart", write.KindFail, false},
		{"atlasmart", write.KindExpire, false},
		{"setnx", write.KindReconcile, false},
		{"powertools", write.KindReconcile, false}, // refused by the schema, not for a ref
	} {
		if got := NeedsRef(c.kind, inspecttest.Keyspace(t, c.preset)); got != c.want {
			t.Errorf("%s %s: NeedsRef %v, want %v", c.preset, c.kind, got, c.want)
		}
	}
	if NeedsRef(write.KindReconcile, nil) {
		t.Error("no keyspace: nothing to ask a reference for")
	}
	if NeedsRef(write.KindReconcile, inspecttest.Schema(t, "json", jsonSchemaYAML)) != true {
		t.Error("a custom schema with actions.reconcile.ref needs a reference")
	}
}

func TestTallyInOutcomeOrder(t *testing.T) {
	rs := []Result{{Outcome: write.Skipped}, {Outcome: write.Conflict}, {Outcome: write.Applied}, {Outcome: write.Applied}, {Outcome: write.Unknown}}
	if got := Summary(rs).String(); got != "2 applied, 1 conflict, 1 unknown, 1 skipped" {
		t.Fatalf("summary %q", got)
	}
	if got := Summary(nil).String(); got != "" {
		t.Fatalf("empty summary %q", got)
	}
	seen := map[write.Outcome]bool{}
	for _, o := range write.Outcomes {
		seen[o] = true
	}
	if len(seen) != 9 || len(write.Outcomes) != 9 {
		t.Fatalf("Outcomes lists %d distinct of %d: every outcome once", len(seen), len(write.Outcomes))
	}
}
