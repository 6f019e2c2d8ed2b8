package config

import (
	"strings"
	"testing"
	"time"

	"github.com/idemctl/idemctl/doctor"
)

func TestDoctorSection(t *testing.T) {
	c, err := Parse([]byte(`keyspaces:
  - name: orders
    preset: atlasmart
doctor:
  retry_horizon: 72h
  require_fsync: always
  silence:
    - rule: persistence
      reason: "dev server: records may be lost on restart"
    - rule: retention
      keyspace: orders
      reason: "the mobile SDK stops retrying after 10 minutes"
`))
	if err != nil {
		t.Fatal(err)
	}
	o := c.Doctor
	if o.RetryHorizon.D() != 72*time.Hour || o.RequireFsync != "always" || len(o.Silence) != 2 || o.Silence[1].Keyspace != "orders" {
		t.Fatalf("%+v", o)
	}
	if err := c.CheckSilences(doctor.RuleIDs()); err != nil {
		t.Fatal(err)
	}
	for doc, want := range map[string]string{
		"doctor:\n  silence:\n    - rule: persistence\n":                                                                     "line 3: doctor.silence[0] (persistence): a reason is required",
		"doctor:\n  silence:\n    - rule: nope\n      reason: x\n":                                                           `line 3: doctor.silence[0]: unknown rule "nope"`,
		"doctor:\n  require_fsync: sometimes\n":                                                                              `line 2: doctor.require_fsync "sometimes"`,
		"keyspaces:\n  - name: a\n    preset: setnx\ndoctor:\n  silence:\n    - {rule: retention, keyspace: b, reason: x}\n": `doctor.silence[0] (retention): unknown keyspace "b"`,
	} {
		c, err := Parse([]byte(doc))
		if err == nil {
			err = c.CheckSilences(doctor.RuleIDs())
		}
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", doc, err, want)
		}
	}
}
