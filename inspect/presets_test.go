package inspect

import (
	"strings"
	"testing"
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
