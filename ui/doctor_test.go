package ui

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/idemctl/idemctl/doctor"
	"github.com/idemctl/idemctl/inspect"
)

// :doctor shows doctor's findings, judged after the scan from what it read
// (seeded processing records without TTL are a finding), and esc comes back.
func TestDoctorScreen(t *testing.T) {
	srv, c, ks := seeded(t)
	ctx := t.Context()
	open := func(m *Model) string {
		press(m, ":")
		typeText(m, "doctor")
		_, cmd := m.Update(tea.KeyPressMsg{Code: tea.KeyEnter})
		run(m, cmd)
		return screenText(m)
	}

	m := New(ctx, Options{Client: c, Keyspaces: []*inspect.Keyspace{ks}, Address: srv.URL(0), NoColor: true, Doctor: &doctor.Options{}})
	defer m.shutdown()
	m.resize(100, 40)
	if got := open(m); !strings.Contains(got, "judged when the scan completes") {
		t.Fatalf("before the scan:\n%s", got)
	}
	press(m, "esc")
	run(m, m.scan.start())
	if m.doctor.report == nil {
		t.Fatal("no judgement after the scan")
	}
	press(m, "tab", "tab", "tab") // Overview
	if got := screenText(m); !strings.Contains(got, "doctor: 2 critical · ") || !strings.Contains(got, ":doctor shows the findings") {
		t.Errorf("the Overview does not point to the findings:\n%s", got)
	}
	got := open(m)
	for _, want := range []string{"DOCTOR", "after the scan of 300 records", "CRITICAL  processing-no-ttl [atlasmart]", "fix: "} {
		if !strings.Contains(got, want) {
			t.Errorf("doctor screen lacks %q:\n%s", want, got)
		}
	}
	press(m, "esc")
	if m.screen != screenOverview {
		t.Errorf("esc went to screen %d, want the Overview it came from", m.screen)
	}

	// Without a doctor (the demo), the screen says so and nothing is judged.
	bare := New(ctx, Options{Client: c, Keyspaces: []*inspect.Keyspace{ks}, Address: srv.URL(0), NoColor: true})
	defer bare.shutdown()
	bare.resize(100, 40)
	run(bare, bare.scan.start())
	if got := open(bare); bare.doctor.report != nil || !strings.Contains(got, "not available in this session") {
		t.Fatalf("without a doctor:\n%s", got)
	}
}
