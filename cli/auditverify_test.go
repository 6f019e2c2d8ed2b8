package cli_test

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/idemctl/idemctl/cli"
	"github.com/idemctl/idemctl/internal/testkit/clitest"
	"github.com/idemctl/idemctl/internal/testkit/recordtest"
	"github.com/idemctl/idemctl/internal/testkit/redistest"
)

// A log written by real write runs verifies, and the head a run printed
// pins it; an edited line is named with its number and exits 15; the end
// cut is caught only by the printed head.
func TestAuditVerifyCLI(t *testing.T) {
	srv := redistest.Shared(t)
	audit := recordtest.AuditPath(t)
	var head string
	for _, k := range []string{"-v1", "-v2", "-v3"} {
		recordtest.Reserve(t, srv, cliKey+k, "body")
		r := clitest.Run(t, nil, "fail", cliKey+k, "--reason", "verify", "--url", srv.URL(0), "--preset", "atlasmart", "--write", "--yes", "--audit-log", audit)
		r.MustCode(t, cli.ExitOK)
		m := regexp.MustCompile(`audit log head: (\d+:[0-9a-f]{64})`).FindStringSubmatch(r.Stderr)
		if m == nil {
			t.Fatalf("no head printed: %s", r.Stderr)
		}
		head = m[1]
	}
	r := clitest.Run(t, nil, "audit", "verify", audit, "--head", head)
	r.MustCode(t, cli.ExitOK)
	if !strings.Contains(r.Stdout, "the chain holds: 7 entries over 7 lines, head "+head) {
		t.Fatalf("verify: %s", r.Stdout)
	}
	raw, _ := os.ReadFile(audit)
	lines := strings.Split(strings.TrimSuffix(string(raw), "\n"), "\n")
	edited := append([]string(nil), lines...)
	edited[3] = strings.Replace(edited[3], `"reason":"verify"`, `"reason":"nothing to see"`, 1)
	os.WriteFile(audit, []byte(strings.Join(edited, "\n")+"\n"), 0o600)
	r = clitest.Run(t, nil, "audit", "verify", audit)
	r.MustCode(t, cli.ExitTampered)
	r.OneLineErr(t)
	if !strings.Contains(r.Stderr, "line 4 (byte ") || !strings.Contains(r.Stderr, "was edited") {
		t.Fatalf("edited line 4: %s", r.Stderr)
	}
	os.WriteFile(audit, []byte(strings.Join(lines[:5], "\n")+"\n"), 0o600)
	clitest.Run(t, nil, "audit", "verify", audit).MustCode(t, cli.ExitOK)
	r = clitest.Run(t, nil, "audit", "verify", audit, "--head", head)
	r.MustCode(t, cli.ExitTampered)
	if !strings.Contains(r.Stderr, "entries were removed from its end") {
		t.Fatalf("cut end: %s", r.Stderr)
	}
	clitest.Run(t, nil, "audit", "verify", audit, "--head", "7:abc").MustCode(t, cli.ExitUsage)
	clitest.Run(t, nil, "audit", "verify", audit+".missing").MustCode(t, cli.ExitNotFound)
}
