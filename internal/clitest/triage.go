package clitest

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/idemctl/idemctl/actions"
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
	envMap := map[string]string{}
	for _, e := range env {
		k, v, _ := strings.Cut(e, "=")
		envMap[k] = v
	}
	cmd, _ := json.Marshal(command) // JSON is YAML
	envDoc, _ := json.Marshal(envMap)
	doc := fmt.Sprintf(`profiles:
  test: {url: %q}
default_profile: test
keyspaces:
  - name: orders
    preset: atlasmart
    reserve_ttl: 600s
    processing_timeout: %s
    verify:
      command: %s
      timeout: %s
      concurrency: 4
      env: %s
`, redisURL, staleAfter, cmd, hookTimeout, envDoc)
	p := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(p, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TriageOut is triage -o json.
type TriageOut struct {
	Records []struct {
		Key, Keyspace, Verdict, Action, Ref, Detail, Why string
		Status                                           int
	} `json:"records"`
	Verdicts map[string]int   `json:"verdicts"`
	Written  bool             `json:"written"`
	Results  []actions.Result `json:"results"`
	Summary  map[string]int   `json:"summary"`
}

// ParseTriage reads a triage -o json run's report.
func ParseTriage(t testing.TB, r Result) TriageOut {
	t.Helper()
	var out TriageOut
	if err := json.Unmarshal([]byte(r.Stdout), &out); err != nil {
		t.Fatalf("triage -o json: %v\n%s\nstderr: %s", err, r.Stdout, r.Stderr)
	}
	return out
}
