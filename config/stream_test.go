package config

import (
	"strings"
	"testing"
	"time"

	"github.com/idemctl/idemctl/inspect/streams"
)

func TestStreamKeyspace(t *testing.T) {
	doc := `profiles:
  p:
    keyspaces: [events, orders]
keyspaces:
  - name: orders
    preset: atlasmart
  - name: events
    kind: stream
    match: "events:*"
    groups: [billing, mail]
    processing_timeout: 90s
    max_deliveries: 3
    dead_letter: "dlq:{stream}"
  - name: bare
    kind: stream
    match: "jobs:*"
`
	c, err := Parse([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	sps, err := c.StreamSpaces(c.Profiles["p"])
	if err != nil || len(sps) != 1 {
		t.Fatalf("profile p: %v %d", err, len(sps))
	}
	want := streams.Space{Name: "events", Match: "events:*", Groups: []string{"billing", "mail"},
		ProcessingTimeout: 90 * time.Second, MaxDeliveries: 3, DeadLetter: "dlq:{stream}", RecoveryConsumer: "idemctl-recovery"}
	if got := *sps[0]; got.Name != want.Name || got.Match != want.Match || strings.Join(got.Groups, ",") != "billing,mail" ||
		got.ProcessingTimeout != want.ProcessingTimeout || got.MaxDeliveries != 3 || got.DeadLetter != want.DeadLetter || got.RecoveryConsumer != want.RecoveryConsumer {
		t.Errorf("events: %+v", got)
	}
	if got := sps[0].DeadLetterFor("events:a"); got != "dlq:events:a" {
		t.Errorf("dead letter of events:a: %q", got)
	}
	all, _ := c.StreamSpaces(nil)
	if len(all) != 2 || all[1].Name != "bare" || all[1].ProcessingTimeout != streams.DefaultStreamTimeout ||
		all[1].MaxDeliveries != streams.DefaultMaxDeliveries || all[1].RecoveryConsumer != streams.DefaultRecoveryConsumer {
		t.Errorf("no profile: %+v", all)
	}
	if kss, err := c.KeyspacesFor(c.Profiles["p"]); err != nil || len(kss) != 1 || kss[0].Name != "orders" {
		t.Errorf("records keyspaces of p: %v %v", kss, err)
	}
}

func TestStreamKeyspaceErrors(t *testing.T) {
	head := "keyspaces:\n  - name: ev\n    kind: stream\n"
	cases := map[string]string{
		"    match: 'e:*'\n    preset: atlasmart\n":        "line 5: keyspace ev: kind stream: preset is not a stream setting",
		"    match: 'e:*'\n    key_template: 'e:{id}'\n":   "line 5: keyspace ev: kind stream: key_template is not a stream setting",
		"    match: 'e:*'\n    retention: 5m\n":            "kind stream: retention is not a stream setting",
		"    match: 'e:*'\n    reserve_ttl: 5m\n":          "kind stream: reserve_ttl is not a stream setting",
		"    match: 'e:*'\n    window: 1d\n":               "kind stream: window is not a stream setting",
		"    match: 'e:*'\n    schema: s\n":                "kind stream: schema is not a stream setting",
		"    groups: [a]\n":                                "line 2: keyspace ev: kind stream: needs match",
		"    match: 'e:*'\n    max_deliveries: -1\n":       "max_deliveries -1: want 1 to 1000000",
		"    match: 'e:*'\n    max_deliveries: 2000000\n":  "max_deliveries 2000000: want 1 to 1000000",
		"    match: 'e:*'\n    groups: [a, a]\n":           `groups: "a" is empty or listed twice`,
		"    match: 'e:*'\n    dead_letter: 'dlq:{key}'\n": "unknown placeholder {key}",
		"    match: 'e:*'\n    dead_letter: 'e:dead'\n":    `dead_letter "e:dead" matches "e:*"`,
		"    match: 'e:*'\n    recovery_consumer: ' r'\n":  "recovery_consumer \" r\" has surrounding spaces",
		"    match: 'e:*'\n    processing_timeout: soon\n": `bad duration "soon"`,
	}
	for body, want := range cases {
		_, err := Parse([]byte(head + body))
		if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: error %v, want one line with %q", body, err, want)
		}
	}
	if _, err := Parse([]byte(head + "    match: 'e:*'\n    dead_letter: 'dlq:{stream}'\n    max_deliveries: 0\n")); err != nil {
		t.Errorf("valid stream keyspace: %v", err)
	}
}

// A stream keyspace is not a records keyspace: naming it to a record
// command says which command reads it.
func TestStreamKeyspaceIsNotRecords(t *testing.T) {
	c, err := Parse([]byte("keyspaces:\n  - name: ev\n    kind: stream\n    match: 'e:*'\n"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Keyspace("ev"); err == nil || !strings.Contains(err.Error(), "read it with idemctl streams") {
		t.Errorf("Keyspace(ev): %v", err)
	}
}
