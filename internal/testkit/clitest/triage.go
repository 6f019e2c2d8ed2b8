package clitest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// VerifyOrders is the example hook's absolute path (examples/verify-orders):
// a relative one would be taken from the config's folder.
func VerifyOrders(t testing.TB) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join(RepoRoot, "examples", "verify-orders"))
	if err == nil {
		_, err = os.Stat(p)
	}
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TriageConfig writes a config whose atlasmart keyspace "orders" (reserve
// TTL 600s as appsim.OrdersApp sets it, stale after staleAfter) has the
// verify hook command, run with hookTimeout and env (NAME=value, e.g.
// pgtest's), and returns its path.
func TriageConfig(t testing.TB, redisURL, staleAfter, hookTimeout string, env []string, command ...string) string {
	t.Helper()
	var cmd, envDoc []string // YAML flow sequences and mappings, values double-quoted
	for _, c := range command {
		cmd = append(cmd, fmt.Sprintf("%q", c))
	}
	for _, e := range env {
		k, v, _ := strings.Cut(e, "=")
		envDoc = append(envDoc, fmt.Sprintf("%s: %q", k, v))
	}
	doc := fmt.Sprintf(`profiles:
  test: {url: %q}
default_profile: test
keyspaces:
  - name: orders
    preset: atlasmart
    reserve_ttl: 600s
    processing_timeout: %s
    verify:
      command: [%s]
      timeout: %s
      concurrency: 4
      env: {%s}
`, redisURL, staleAfter, strings.Join(cmd, ", "), hookTimeout, strings.Join(envDoc, ", "))
	p := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(p, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}
