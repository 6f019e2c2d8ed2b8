package config

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/idemctl/idemctl/doctor"
)

// exampleConfig is the shipped config.example.yaml, parsed, and its text.
func exampleConfig(t *testing.T) (*Config, []byte) {
	t.Helper()
	data, err := os.ReadFile("../config.example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	c, err := Parse(data)
	if err != nil {
		t.Fatalf("config.example.yaml: %v", err)
	}
	return c, data
}

// The shipped example must stay valid: it documents every setting.
func TestExampleConfigParses(t *testing.T) {
	c, data := exampleConfig(t)
	for _, p := range []string{"local", "production"} {
		if c.Profiles[p] == nil {
			t.Fatalf("example lacks profile %s", p)
		}
	}
	prod := c.Profiles["production"]
	if prod.Writes || !prod.Protected || prod.Scan.MaxLatency.D() != time.Millisecond {
		t.Errorf("production profile must be read-only, protected and held to a 1ms latency budget: %+v", prod)
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
		"requires:", "actions:", "verify:", "command:", "concurrency:", "env:", "set:", "ref:", "retry_horizon:", "require_fsync:", "silence:",
		"function_name:", "event_key_jmespath:", "payload_validation_jmespath:", "hash_function:", "runtime:", "hmac_secret_env:"} {
		if !strings.Contains(string(data), key) {
			t.Errorf("config.example.yaml does not document %s", key)
		}
	}
}

// Every kind of config error names the line at fault: the setting's own
// line, not the line where its keyspace, profile or schema starts, nor the
// line before (the YAML library counts some lines from 0). Each document
// marks the line the error must name with "# <-".
func TestParseErrorsNameTheLine(t *testing.T) {
	for _, tc := range []struct{ name, doc, want string }{
		// the three
		{"bad preset on line 5", "profiles:\n  local: {url: \"redis://127.0.0.1:6379\"}\nkeyspaces:\n  - name: orders\n    preset: nope # <-\n",
			`keyspace orders: unknown preset "nope"`},
		{"bad placeholder on line 7", "profiles:\n  local: {url: \"redis://127.0.0.1:6379\"}\nkeyspaces:\n  - name: orders\n    preset: atlasmart\n    verify:\n      command: [examples/verify-orders, \"{nope}\"] # <-\n",
			"keyspace orders: verify: command argument 1: unknown placeholder {nope}"},
		{"unclosed { on line 2", "profiles:\n  local: {url: \"redis://127.0.0.1:6379\" # <-\nkeyspaces: []\n",
			"did not find expected ',' or '}'"},
		// syntax
		{"unclosed [ on line 3", "default_profile: a\nprofiles: {a: {}}\nkeyspaces: [ # <-\n",
			"did not find expected"},
		{"a key indented less than its block", "profiles:\n  a:\n    url: x\n    writes: true\n   user: y # <-\n",
			"did not find expected key"},
		{"a setting among list items", "keyspaces:\n  - name: a\n    preset: setnx\n  - name: b\n    preset: setnx\n  default_profile: x # <-\n",
			"did not find expected '-' indicator"},
		{"two colons", "profiles:\n  a:\n    url: redis: x # <-\n",
			"mapping values are not allowed"},
		{"a second document", "profiles: {}\n---\nkeyspaces: [] # <-\n",
			"a second YAML document"},
		// decoding
		{"unknown setting", "profiles:\n  a:\n    url: x\n    bogus: 1 # <-\n", `unknown setting "bogus"`},
		{"bad duration", "keyspaces:\n  - name: k\n    preset: atlasmart\n    retention: later # <-\n", `bad duration "later"`},
		{"set twice", "profiles:\n  a:\n    url: x\n    url: y # <-\n", "set twice"},
		// keyspaces
		{"keyspace without a name", "keyspaces:\n  - preset: setnx # <-\n    match: 'x:*'\n", "keyspace needs a name"},
		{"keyspace twice", "keyspaces:\n  - name: k\n    preset: setnx\n  - preset: setnx\n    name: k # <-\n", `keyspace "k" defined twice`},
		{"unknown kind", "keyspaces:\n  - name: k\n    preset: setnx\n    kind: queue # <-\n", `kind "queue"`},
		{"unknown schema", "keyspaces:\n  - name: k\n    match: 'x:*'\n    schema: ghost # <-\n", `unknown schema "ghost"`},
		{"preset and schema", "schemas:\n  s: {container: hash, state: {field: s}}\nkeyspaces:\n  - name: k\n    preset: setnx # <-\n    schema: s\n", "set preset or schema, not both"},
		{"no preset nor schema", "keyspaces:\n  - name: k # <-\n    match: 'x:*'\n", "needs a preset or a schema"},
		{"bad key template", "keyspaces:\n  - name: k\n    preset: atlasmart\n    match: 'x:*'\n    key_template: 'x:{a' # <-\n", "unclosed '{'"},
		{"max_value too small", "keyspaces:\n  - name: k\n    preset: setnx\n    match: 'x:*'\n    max_value: 100 # <-\n", "below 256 bytes"},
		{"verify without command", "keyspaces:\n  - name: k\n    preset: atlasmart\n    verify: {timeout: 2s} # <-\n", "verify: command is empty"},
		{"verify placeholder on its own line", "keyspaces:\n  - name: k\n    preset: atlasmart\n    verify:\n      command:\n        - ./v\n        - '{principal}'\n        - '{order_id}' # <-\n", "command argument 2: unknown placeholder {order_id}"},
		{"verify timeout", "keyspaces:\n  - name: k\n    preset: atlasmart\n    verify:\n      command: [./v]\n      timeout: 2h # <-\n", "verify: timeout 2h0m0s"},
		{"verify concurrency", "keyspaces:\n  - name: k\n    preset: atlasmart\n    verify:\n      concurrency: 500 # <-\n      command: [./v]\n", "verify: concurrency 500"},
		{"verify env name", "keyspaces:\n  - name: k\n    preset: atlasmart\n    verify:\n      command: [./v]\n      env: {\"A=B\": x} # <-\n", "is not a variable name"},
		{"stream: a records setting", "keyspaces:\n  - name: ev\n    kind: stream\n    match: 'e:*'\n    preset: atlasmart # <-\n", "kind stream: preset is not a stream setting"},
		{"stream: max_deliveries", "keyspaces:\n  - name: ev\n    kind: stream\n    match: 'e:*'\n    max_deliveries: -1 # <-\n", "max_deliveries -1"},
		{"stream: dead_letter", "keyspaces:\n  - name: ev\n    kind: stream\n    match: 'e:*'\n    dead_letter: 'dlq:{key}' # <-\n", "unknown placeholder {key}"},
		{"stream: without match", "keyspaces:\n  - name: ev # <-\n    kind: stream\n", "needs match"},
		{"ledger: unknown preset", "keyspaces:\n  - name: l\n    kind: ledger\n    preset: atlasmart # <-\n", "unknown ledger preset"},
		{"ledger: a records setting", "keyspaces:\n  - name: l\n    kind: ledger\n    preset: zset-window\n    retention: 1h # <-\n", "retention: not a ledger setting"},
		{"ledger: score_unit", "keyspaces:\n  - name: l\n    kind: ledger\n    preset: zset-window\n    score_unit: us # <-\n", `score_unit "us"`},
		{"ledger: period", "keyspaces:\n  - name: l\n    kind: ledger\n    preset: set-per-period\n    period: daily # <-\n", `period "daily"`},
		// schemas
		{"schema container", "schemas:\n  s:\n    state: {field: s}\n    container: tree # <-\n", "container must be hash or string"},
		{"schema state field", "schemas:\n  s:\n    container: hash\n    state: # <-\n      map: {}\n", "state.field is required"},
		{"schema action mode", "schemas:\n  s:\n    container: hash\n    state: {field: s}\n    actions:\n      fail:\n        mode: nuke # <-\n", "actions.fail.mode"},
		// profiles
		{"profile: unknown keyspace", "keyspaces:\n  - {name: k, preset: setnx}\nprofiles:\n  p:\n    keyspaces:\n      - k\n      - ghost # <-\n", `unknown keyspace "ghost"`},
		{"profile: two passwords", "profiles:\n  p:\n    password_env: A\n    url: x\n    password_file: B # <-\n", "not both"},
		{"profile: negative scan setting", "profiles:\n  p:\n    scan:\n      count: 10\n      max_keys: -1 # <-\n", "must not be negative"},
		{"profile: scan setting out of range", "profiles:\n  p:\n    scan:\n      count: 10\n      max_nodes: 100000 # <-\n", "out of range"},
		{"profile: read path", "profiles:\n  p:\n    url: x\n    scan: {read_path: fast} # <-\n", `read_path "fast"`},
		{"unknown default profile", "profiles: {a: {}}\ndefault_profile: nope # <-\n", "is not a profile"},
		// doctor
		{"doctor: unknown rule", "doctor:\n  silence:\n    - reason: x\n      rule: nope # <-\n", `unknown rule "nope"`},
		{"doctor: no reason", "doctor:\n  silence:\n    - rule: persistence # <-\n", "a reason is required"},
		{"doctor: unknown keyspace", "keyspaces:\n  - {name: a, preset: setnx}\ndoctor:\n  silence:\n    - rule: retention\n      reason: x\n      keyspace: b # <-\n", `unknown keyspace "b"`},
		{"doctor: require_fsync", "doctor:\n  retry_horizon: 1h\n  require_fsync: sometimes # <-\n", "require_fsync"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := 0
			for i, l := range strings.Split(tc.doc, "\n") {
				if strings.HasSuffix(l, "# <-") {
					want = i + 1
				}
			}
			if want == 0 {
				t.Fatal("the document marks no line with # <-")
			}
			c, err := Parse([]byte(tc.doc))
			if err == nil { // the doctor's rule names are checked where they are known
				err = c.CheckSilences(doctor.RuleIDs())
			}
			if err == nil {
				t.Fatalf("no error for %q", tc.doc)
			}
			prefix := fmt.Sprintf("line %d: ", want)
			if msg := err.Error(); !strings.HasPrefix(msg, prefix) || !strings.Contains(msg, tc.want) || strings.Contains(msg, "\n") {
				t.Errorf("%q:\n got %s\nwant one line starting %q holding %q", tc.doc, msg, prefix, tc.want)
			}
		})
	}
	if c, err := Parse(nil); err != nil || c == nil {
		t.Errorf("empty config: %v", err)
	}
}

// Config errors are one line in the file's terms: the line, the key's path
// and what it accepts, never the Go types the file decodes into.
func TestParseErrorsSpeakTheFilesTerms(t *testing.T) {
	cases := []struct{ name, doc, want string }{
		{"unknown scan setting", "profiles:\n  prod:\n    scan:\n      cuont: 3\n",
			`line 4: unknown setting "cuont" under profiles.prod.scan (did you mean count? known: count, keys_per_sec, pause, max_latency, max_keys, no_memory, max_nodes, response_sizes, read_path)`},
		{"unknown profile setting", "profiles:\n  prod:\n    ur: redis://x\n",
			`line 3: unknown setting "ur" under profiles.prod (did you mean url? known: mode, addrs,`},
		{"unknown keyspace setting", "keyspaces:\n  - name: k\n    prest: atlasmart\n",
			`line 3: unknown setting "prest" under keyspaces[0] (did you mean preset? known: name, match, preset,`},
		{"unknown top-level setting", "keyspace: []\n",
			`line 1: unknown setting "keyspace" at the top level (did you mean keyspaces? known: default_profile, profiles, keyspaces, schemas, doctor)`},
		{"unknown schema setting", "schemas:\n  s:\n    container: hash\n    state: {field: s, mapp: {}}\n",
			`line 4: unknown setting "mapp" under schemas.s.state (did you mean map? known: field, map, otherwise, missing)`},
		{"unknown and far from any", "profiles:\n  prod:\n    scan:\n      velocity: 3\n",
			`line 4: unknown setting "velocity" under profiles.prod.scan (known: count,`},
		{"bool", "profiles:\n  prod:\n    url: x\n    scan:\n      no_memory: maybe\n",
			`line 5: profiles.prod.scan.no_memory: "maybe" is not true or false`},
		{"bool in a schema", "schemas:\n  s:\n    container: hash\n    lock: {orphans: perhaps}\n",
			`line 4: schemas.s.lock.orphans: "perhaps" is not true or false`},
		{"int", "profiles:\n  prod:\n    scan:\n      count: lots\n",
			`line 4: profiles.prod.scan.count: "lots" is not a whole number`},
		{"fraction", "profiles:\n  prod:\n    scan:\n      keys_per_sec: 2.5\n",
			`line 4: profiles.prod.scan.keys_per_sec: "2.5" is not a whole number`},
		{"int out of range", "profiles:\n  prod:\n    scan:\n      max_keys: 99999999999999999999999\n",
			`line 4: profiles.prod.scan.max_keys: 99999999999999999999999 is out of range`},
		{"int in a schema", "schemas:\n  s:\n    actions: {fail: {status: ok}}\n",
			`line 3: schemas.s.actions.fail.status: "ok" is not a whole number`},
		{"duration", "profiles:\n  prod:\n    dial_timeout: soon\n",
			`line 3: profiles.prod.dial_timeout: bad duration "soon" (want e.g. 30s, 5m, 2h, 1d)`},
		{"duration not a value", "profiles:\n  prod:\n    scan: {pause: [1]}\n",
			`line 3: profiles.prod.scan.pause: want a duration such as 30s or 5m`},
		{"keyspace duration", "keyspaces:\n  - name: k\n    preset: atlasmart\n    retention: later\n",
			`line 4: keyspaces[0].retention: bad duration "later"`},
		{"size", "keyspaces:\n  - name: k\n    preset: atlasmart\n    max_value: huge\n",
			`line 4: keyspaces[0].max_value: bad size "huge" (want e.g. 16384, 16KiB, 1MiB)`},
		{"schema default duration", "schemas:\n  s:\n    defaults: {processing_timeout: soon}\n",
			`line 3: schemas.s.defaults.processing_timeout: bad duration "soon"`},
		{"text given a mapping", "profiles:\n  prod:\n    url: {host: x}\n",
			`line 3: profiles.prod.url: want text, got a mapping`},
		{"list given a value", "profiles:\n  prod:\n    keyspaces: orders\n",
			`line 3: profiles.prod.keyspaces: want a list such as [a, b], got "orders"`},
		{"settings given a value", "profiles:\n  prod:\n    scan: fast\n",
			`line 3: profiles.prod.scan: want settings (count, keys_per_sec,`},
		{"entries given a list", "profiles: [prod]\n",
			`line 1: profiles: want named entries (name: …), got a list`},
		{"keyspaces given a mapping", "keyspaces: {orders: {}}\n",
			`line 1: keyspaces: want a list such as [a, b], got a mapping`},
		{"not settings at all", "hello\n",
			`line 1: want settings (default_profile, profiles, keyspaces, schemas, doctor), got "hello"`},
		{"set twice", "profiles:\n  prod:\n    url: a\n    url: b\n",
			`line 4: profiles.prod.url is set twice (first on line 3)`},
		{"profile twice", "profiles:\n  prod: {}\n  prod: {}\n",
			`line 3: profiles.prod is set twice (first on line 2)`},
		{"tab indent", "profiles:\n\tprod: {}\n",
			`line 2: found character that cannot start any token (a tab indents a line: YAML indents with spaces)`},
		{"syntax", "profiles:\n  prod: {url: x\n",
			`did not find expected ',' or '}'`},
		{"unknown default profile", "default_profile: nope\nprofiles: {a: {}}\n",
			`line 1: default_profile "nope" is not a profile (have: a)`},
		{"bad schema", "schemas:\n  s:\n    container: tree\n",
			`line 3: schema s: container must be hash or string, not "tree"`},
		{"merged settings are checked", "profiles:\n  base: &b {scan: {count: 1}}\n  prod:\n    <<: *b\n    scan: {cuont: 2}\n",
			`line 5: unknown setting "cuont" under profiles.prod.scan`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.doc))
			if err == nil {
				t.Fatalf("no error for %q", tc.doc)
			}
			msg := err.Error()
			if !strings.Contains(msg, tc.want) {
				t.Errorf("error\n  %s\nwant it to contain\n  %s", msg, tc.want)
			}
			if strings.Contains(msg, "\n") {
				t.Errorf("error spans lines: %q", msg)
			}
			for _, leak := range []string{"config.", "inspect.", "units.", "yaml.", "!!", "unmarshal", "struct", "type ", "int64", "[]string"} {
				if strings.Contains(msg, leak) {
					t.Errorf("error %q shows Go internals (%q)", msg, leak)
				}
			}
		})
	}
}

// Merge keys and anchors are YAML the decoder accepts; the check must too.
func TestParseAcceptsMergedSettings(t *testing.T) {
	doc := "profiles:\n  base: &b {url: redis://x:1, scan: {count: 50}}\n  prod:\n    <<: *b\n    writes: true\n"
	c, err := Parse([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	if p := c.Profiles["prod"]; p.URL != "redis://x:1" || p.Scan.Count != 50 || !p.Writes {
		t.Errorf("merged profile: %+v", p)
	}
}

func TestVerifyHookConfig(t *testing.T) {
	doc := "keyspaces:\n  - name: orders\n    preset: atlasmart\n    verify:\n      command: [hooks/verify-orders, \"{principal}\", \"--key={idem_key}\"]\n      timeout: 2s\n      concurrency: 3\n      env: {PGPORT: \"5433\", PGHOST: 127.0.0.1}\n  - name: plain\n    match: \"x:*\"\n    preset: setnx\n"
	c, err := Parse([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	c.Path = "/etc/idemctl/config.yaml"
	h := c.VerifyHook("orders")
	if h == nil || strings.Join(h.Command, " ") != "/etc/idemctl/hooks/verify-orders {principal} --key={idem_key}" ||
		h.Timeout != 2*time.Second || h.Concurrency != 3 || strings.Join(h.Env, " ") != "PGHOST=127.0.0.1 PGPORT=5433" {
		t.Fatalf("hook: %+v", h)
	}
	if c.VerifyHook("plain") != nil || c.VerifyHook("ghost") != nil {
		t.Fatal("a keyspace without verify has a hook")
	}

	bad := []struct{ doc, want string }{
		{"keyspaces:\n  - name: k\n    preset: atlasmart\n    verify:\n      command: [./v, \"{order_id}\"]\n",
			"line 5: keyspace k: verify: command argument 1: unknown placeholder {order_id} (have: {endpoint}, {fingerprint}, {idem_key}, {key}, {keyspace}, {principal}, {state})"},
		{"keyspaces:\n  - name: k\n    preset: atlasmart\n    verify: {timeout: 2s}\n",
			"line 4: keyspace k: verify: command is empty"},
		{"keyspaces:\n  - name: k\n    preset: atlasmart\n    verify:\n      command: [./v]\n      concurrency: 500\n",
			"line 6: keyspace k: verify: concurrency 500: want 1 to 64"},
		{"keyspaces:\n  - name: k\n    preset: atlasmart\n    verify:\n      command: [./v]\n      timeout: 2h\n",
			"line 6: keyspace k: verify: timeout 2h0m0s: want more than 0 and at most 10m0s"},
		{"keyspaces:\n  - name: k\n    preset: atlasmart\n    verify:\n      command: ./v\n",
			"line 5: keyspaces[0].verify.command: want a list such as [a, b]"},
		{"keyspaces:\n  - name: k\n    preset: atlasmart\n    verify:\n      cmd: [./v]\n",
			`line 5: unknown setting "cmd" under keyspaces[0].verify`},
		{"keyspaces:\n  - name: k\n    preset: atlasmart\n    verify:\n      command: [./v]\n      timeout: soon\n",
			`line 6: keyspaces[0].verify.timeout: bad duration "soon"`},
	}
	for _, b := range bad {
		_, err := Parse([]byte(b.doc))
		if err == nil || !strings.Contains(err.Error(), b.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q:\n got %v\nwant %s", b.doc, err, b.want)
		}
	}
}
