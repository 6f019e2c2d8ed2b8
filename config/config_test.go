package config

import (
	"os"
	"strings"
	"testing"
	"time"
)

// The shipped example must stay valid: it documents every setting.
func TestExampleConfigParses(t *testing.T) {
	data, err := os.ReadFile("../config.example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	c, err := Parse(data)
	if err != nil {
		t.Fatalf("config.example.yaml: %v", err)
	}
	for _, p := range []string{"local", "production"} {
		if c.Profiles[p] == nil {
			t.Fatalf("example lacks profile %s", p)
		}
	}
	prod := c.Profiles["production"]
	if prod.Writes || !prod.Protected || prod.Scan.KeysPerSec == 0 {
		t.Errorf("production profile must be read-only, protected and throttled: %+v", prod)
	}
	kss, err := c.KeyspacesFor(c.Profiles["local"])
	if err != nil || len(kss) != 2 {
		t.Fatalf("local keyspaces: %v %d", err, len(kss))
	}
	if kss[0].ProcessingTimeout != 30*time.Second || kss[0].Template.Names()[1] != "endpoint" {
		t.Errorf("orders keyspace: %+v", kss[0])
	}
	if kss[1].Schema.Name != "payments-json" || kss[1].ProcessingTimeout != 2*time.Minute {
		t.Errorf("legacy keyspace: schema %s timeout %v", kss[1].Schema.Name, kss[1].ProcessingTimeout)
	}
	// Every settable key of a profile appears in the example.
	for _, key := range []string{"url:", "user:", "password_env:", "password_file:", "tls_ca:", "tls_insecure:",
		"dial_timeout:", "read_timeout:", "writes:", "protected:", "audit_log:", "keyspaces:", "count:",
		"keys_per_sec:", "pause:", "max_keys:", "no_memory:", "match:", "preset:", "schema:", "key_template:",
		"processing_timeout:", "reserve_ttl:", "retention:", "large_response:", "max_value:", "container:",
		"codec:", "otherwise:", "missing:", "mode:", "addrs:", "master_name:", "sentinel_password_env:",
		"read_from_replicas:", "max_nodes:", "fingerprint:", "status:", "response:", "created:", "deadline:", "age_from_ttl:", "expires:", "failure:",
		"requires:", "actions:", "set:", "ref:"} {
		if !strings.Contains(string(data), key) {
			t.Errorf("config.example.yaml does not document %s", key)
		}
	}
}

func TestParseErrorsNameTheLine(t *testing.T) {
	cases := map[string]string{
		"profiles:\n  a:\n    url: x\n    bogus: 1\n":                            "line 4",
		"keyspaces:\n  - name: k\n    preset: atlasmart\n    retention: later\n": "line 4",
		"keyspaces:\n  - name: k\n    preset: ghost\n":                           "line 2",
		"keyspaces:\n  - name: k\n  - name: k\n    preset: atlasmart\n":          "line 2",
		"schemas:\n  s:\n    container: tree\n":                                  "line 2",
		"profiles:\n  p:\n    password_env: A\n    password_file: B\n":           "line 2",
	}
	for doc, want := range cases {
		_, err := Parse([]byte(doc))
		if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: error %v, want one line naming %s", doc, err, want)
		}
	}
	if c, err := Parse(nil); err != nil || c == nil {
		t.Errorf("empty config: %v", err)
	}
}
