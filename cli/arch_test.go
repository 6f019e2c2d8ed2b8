package cli_test

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/idemctl/idemctl/internal/testkit/clitest"
)

// The engine never imports UI code: only ui/ and the command layer (and
// main) may use charm.land.
func TestEngineImportsNoUI(t *testing.T) {
	list := exec.Command("go", "list", "./internal/...")
	list.Dir = clitest.RepoRoot
	internal, err := list.Output()
	if err != nil {
		t.Fatalf("go list ./internal/...: %v", err)
	}
	pkgs := []string{"./inspect", "./inspect/detect", "./inspect/filter", "./inspect/keytemplate", "./inspect/pace", "./inspect/topology", "./inspect/glob", "./inspect/dedup", "./inspect/histogram", "./inspect/topk", "./inspect/ledger", "./inspect/snapshot", "./inspect/recordstore", "./inspect/streams", "./inspect/follow", "./internal/appsim", "./config", "./exporter", "./actions", "./actions/audit", "./actions/write", "./doctor", "./verify", "./reaper"}
	for _, p := range strings.Fields(string(internal)) {
		// The command layer, its test kit and the suites that drive it
		// may reach the UI; the rest of internal/ may not.
		if !strings.HasSuffix(p, "/cli") && !strings.HasSuffix(p, "/internal/testkit/clitest") && !strings.HasSuffix(p, "/acceptance") {
			pkgs = append(pkgs, p)
		}
	}
	cmd := exec.Command("go", append([]string{"list", "-deps"}, pkgs...)...)
	cmd.Dir = clitest.RepoRoot
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, dep := range strings.Fields(string(out)) {
		if strings.HasPrefix(dep, "charm.land/") || strings.Contains(dep, "charmbracelet") {
			t.Errorf("engine package depends on UI package %s", dep)
		}
	}
}

// Plans are made and judged only in actions/: the CLI and the TUI hand a
// Request to Executor.Plan and a Plan to Executor.Apply, never build one or
// change its verdict (the CLI once turned --expect-* into conflicts itself,
// and so never audited them).
func TestPlansAreOnlyMadeInActions(t *testing.T) {
	edit := regexp.MustCompile(`\.(Refused|Outcome|Changes|Before|After|Delete)\s*=[^=]|actions\.Plan\{`)
	err := filepath.WalkDir(clitest.RepoRoot, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(clitest.RepoRoot, path)
		if d.IsDir() && (rel == "actions" || rel == "testdata" || strings.HasPrefix(d.Name(), ".") || d.Name() == "node_modules") && rel != "." {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for i, line := range strings.Split(string(src), "\n") {
			if m := edit.FindString(line); m != "" && strings.Contains(string(src), "idemctl/actions\"") {
				t.Errorf("%s:%d: a plan is built or changed outside actions/: %s", rel, i+1, strings.TrimSpace(line))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
