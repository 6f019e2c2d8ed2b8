package inspect

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/idemctl/idemctl/internal/testkit/redistest"
)

// A schema document (a preset, or one in a config's schemas:) is decoded
// like the config: errors name the line, the key and what it accepts.
func TestParseSchemaYAMLErrorsSpeakTheDocumentsTerms(t *testing.T) {
	cases := []struct{ name, doc, want string }{
		{"unknown key", "container: hash\nstate: {field: s}\nbogus: 1\n",
			`schema x: line 3: unknown setting "bogus" at the top level (known: description, container, codec, state,`},
		{"near miss", "container: hash\nstate: {field: s}\nfingerprnt: f\n",
			`schema x: line 3: unknown setting "fingerprnt" at the top level (did you mean fingerprint? known:`},
		{"nested unknown", "container: hash\nstate: {field: s}\nlock: {key: '{key}:lock', stale: true}\n",
			`schema x: line 3: unknown setting "stale" under lock (known: key, stale_if_missing, orphans, created, strip)`},
		{"bool", "container: hash\nstate: {field: s}\nage_from_ttl: sometimes\n",
			`schema x: line 3: age_from_ttl: "sometimes" is not true or false`},
		{"int", "container: hash\nstate: {field: s}\nactions: {reconcile: {status: two-hundred}}\n",
			`schema x: line 3: actions.reconcile.status: "two-hundred" is not a whole number`},
		{"duration", "container: hash\nstate: {field: s}\ndefaults: {processing_timeout: soon}\n",
			`schema x: line 3: defaults.processing_timeout: bad duration "soon" (want e.g. 30s, 5m, 2h, 1d)`},
		{"list", "container: hash\nstate: {field: s}\nrequires: request.method\n",
			`schema x: line 3: requires: want a list such as [a, b], got "request.method"`},
		{"mapping", "container: hash\nstate: [s]\n",
			`schema x: line 2: state: want settings (field, map, otherwise, missing), got a list`},
		{"text", "container: [hash]\n",
			`schema x: line 1: container: want text, got a list`},
		{"set twice", "container: hash\ncontainer: string\n",
			`schema x: line 2: container is set twice (first on line 1)`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseSchemaYAML("x", []byte(tc.doc))
			if err == nil {
				t.Fatalf("no error for %q", tc.doc)
			}
			msg := err.Error()
			if !strings.Contains(msg, tc.want) || strings.Contains(msg, "\n") {
				t.Errorf("error\n  %q\nwant one line containing\n  %s", msg, tc.want)
			}
			for _, leak := range []string{"inspect.", "units.", "yaml.", "!!", "unmarshal", "struct", "type "} {
				if strings.Contains(msg, leak) {
					t.Errorf("error %q shows Go internals (%q)", msg, leak)
				}
			}
		})
	}
}

// detect proposes reserve_ttl, processing_timeout and retention from the
// sampled TTLs, beside the preset's defaults, and says when the sample
// cannot support one.
func TestDetectProposesTiming(t *testing.T) {
	_, c := redistest.SharedClient(t)
	ctx := t.Context()
	write := func(state string, ttl time.Duration, n int) {
		for i := range n {
			key := fmt.Sprintf("atlasmart:ch23:idem:customer-%d:POST:/orders:%s-%d", i, state, i)
			c.HSet(ctx, key, "state", state, "fingerprint", "fp")
			c.PExpire(ctx, key, ttl-time.Duration(i)*time.Minute) // reserved i minutes ago
		}
	}
	write("PROCESSING", 6*time.Hour-2*time.Second, 9)
	write("SUCCEEDED", 24*time.Hour-5*time.Second, 6)
	res, err := Detect(ctx, c, "atlasmart:*", 200)
	if err != nil || res.Best == nil || res.Best.Preset != "atlasmart" {
		t.Fatalf("%v %+v", err, res.Best)
	}
	got := map[string]Proposal{}
	for _, p := range res.Timing {
		got[p.Setting] = p
	}
	// ages 0–8 min (+2 s) under 6h: median 4m02s, three times that rounded up
	if got["reserve_ttl"].Value != "6h" || got["reserve_ttl"].Default != "1m" || got["retention"].Value != "24h" ||
		got["processing_timeout"].Value != "13m" || !strings.Contains(got["processing_timeout"].Evidence, "median age (4m") {
		t.Fatalf("%+v", res.Timing)
	}
	if !strings.Contains(res.YAML, "    reserve_ttl: 6h # preset default 1m\n") {
		t.Errorf("yaml:\n%s", res.YAML)
	}

	// Too few in flight: said, not guessed.
	c.FlushAll(ctx)
	write("PROCESSING", time.Hour, 2)
	write("SUCCEEDED", time.Hour, 6)
	res, err = Detect(ctx, c, "atlasmart:*", 200)
	if err != nil || len(res.Timing) != 3 || res.Timing[0].Value != "" || !strings.HasPrefix(res.Timing[0].Evidence, "not proposed: 2 processing records") ||
		res.Timing[1].Value != "" || strings.Contains(res.YAML, "reserve_ttl") {
		t.Fatalf("%v %+v\n%s", err, res.Timing, res.YAML)
	}
}
