package cli_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/idemctl/idemctl/cli"
	"github.com/idemctl/idemctl/internal/testkit/clitest"
	"github.com/idemctl/idemctl/internal/testkit/redistest"
)

// readmeConfig is the README's example config (the 3 a.m. walkthrough's
// first yaml block), as a newcomer copies it.
func readmeConfig(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(clitest.RepoRoot, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)```yaml\n(.*?)```").FindStringSubmatch(string(data))
	if m == nil || !strings.Contains(m[1], "verify:") {
		t.Fatal("README.md has no yaml block with a verify hook")
	}
	return m[1]
}

// The README's config copied to the default config place names its hook
// relative to that folder: config view says at once that the executable
// is not there, in one line naming where it was looked for; once the hook
// is where the config says, nothing is said.
func TestConfigViewWarnsOfAMissingHook(t *testing.T) {
	home := t.TempDir()
	dir := filepath.Join(home, ".config", "idemctl")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "config.yaml"), []byte(readmeConfig(t)), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"HOME": home}
	r := clitest.Run(t, env, "config", "view")
	r.MustCode(t, cli.ExitOK)
	want := "idemctl: warning: keyspace orders: verify hook " + filepath.Join(dir, "examples", "verify-orders") +
		" (command examples/verify-orders, taken from the config file's folder) does not exist"
	if !strings.Contains(r.Stderr, want) || strings.Count(r.Stderr, "warning:") != 1 {
		t.Fatalf("config view of the README's config at the default place:\n%s\nwant one warning: %s", r.Stderr, want)
	}
	if !strings.Contains(r.Stdout, "examples/verify-orders") || !strings.Contains(r.Stdout, "$REDIS_PASSWORD (profile)") {
		t.Fatalf("config view does not show the hook, or where the password comes from (read none): %s", r.Stdout)
	}

	// Copied where the README says: no warning.
	hook, err := os.ReadFile(clitest.VerifyOrders(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "examples"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "examples", "verify-orders"), hook, 0o644); err != nil {
		t.Fatal(err)
	}
	r = clitest.Run(t, env, "config", "view")
	if !strings.Contains(r.Stderr, "is not executable: chmod +x it") {
		t.Fatalf("a hook without its execute bit: %s", r.Stderr)
	}
	if err := os.Chmod(filepath.Join(dir, "examples", "verify-orders"), 0o755); err != nil {
		t.Fatal(err)
	}
	r = clitest.Run(t, env, "config", "view")
	r.MustCode(t, cli.ExitOK)
	if strings.Contains(r.Stderr, "warning") {
		t.Fatalf("a hook that can run drew a warning: %s", r.Stderr)
	}
}

// The first use of a hook that cannot run says so in one line before any
// record is read, not as every record's "unknown" verdict after.
func TestTriageWarnsOfAMissingHook(t *testing.T) {
	srv := redistest.Shared(t)
	cfg := clitest.TriageConfig(t, srv.URL(0), "30s", "5s", nil, "examples/verify-orders", "{principal}", "{idem_key}")
	r := clitest.Run(t, nil, "triage", "--config", cfg, "--verify")
	r.MustCode(t, cli.ExitOK)
	want := "idemctl: warning: keyspace orders: verify hook " + filepath.Join(filepath.Dir(cfg), "examples", "verify-orders") +
		" (command examples/verify-orders, taken from the config file's folder) does not exist"
	if !strings.HasPrefix(r.Stderr, want) || strings.Count(r.Stderr, "warning:") != 1 {
		t.Fatalf("triage with a missing hook:\n%s\nwant first: %s", r.Stderr, want)
	}
	r = clitest.Run(t, nil, "triage", "--config", clitest.TriageConfig(t, srv.URL(0), "30s", "5s", nil, "no-such-verify-hook", "{idem_key}"), "--verify")
	if !strings.Contains(r.Stderr, "verify hook no-such-verify-hook is not an executable on PATH") {
		t.Fatalf("triage with a bare name not on PATH: %s", r.Stderr)
	}
	r = clitest.Run(t, nil, "triage", "--config", clitest.TriageConfig(t, srv.URL(0), "30s", "5s", nil, clitest.VerifyOrders(t), "{idem_key}"), "--verify")
	r.MustCode(t, cli.ExitOK)
	if strings.Contains(r.Stderr, "warning") {
		t.Fatalf("a hook that can run drew a warning: %s", r.Stderr)
	}
}
