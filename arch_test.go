package main

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The engine never imports UI code: only ui/ (and main) may use charm.land.
func TestEngineImportsNoUI(t *testing.T) {
	pkgs := []string{"./inspect", "./appsim", "./config", "./exporter", "./internal/..."}
	if _, err := os.Stat("actions"); err == nil {
		pkgs = append(pkgs, "./actions")
	}
	out, err := exec.Command("go", append([]string{"list", "-deps"}, pkgs...)...).CombinedOutput()
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
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (path == "actions" || path == "testdata" || strings.HasPrefix(d.Name(), ".")) && path != "." {
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
				t.Errorf("%s:%d: a plan is built or changed outside actions/: %s", path, i+1, strings.TrimSpace(line))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
