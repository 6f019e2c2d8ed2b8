package cli_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/idemctl/idemctl/internal/testkit/clitest"
)

// docs/commands is generated from the commands' own definitions: a flag or
// help text that changed without regenerating it fails here, with the fix.
func TestCommandDocsAreCurrent(t *testing.T) {
	fresh := t.TempDir()
	clitest.Run(t, nil, "man", "--markdown", fresh).MustCode(t, 0)
	committed := filepath.Join(clitest.RepoRoot, "docs", "commands")
	const fix = "regenerate with: go run . man --markdown docs/commands"
	want, got := mdNames(t, fresh), mdNames(t, committed)
	if !slices.Equal(want, got) {
		t.Fatalf("docs/commands holds %v, the commands give %v: %s", got, want, fix)
	}
	for _, name := range want {
		a, _ := os.ReadFile(filepath.Join(fresh, name))
		b, _ := os.ReadFile(filepath.Join(committed, name))
		if string(a) != string(b) {
			t.Errorf("docs/commands/%s is stale: %s", name, fix)
		}
	}
}

func mdNames(t *testing.T, dir string) []string {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(dir, "*.md"))
	if err != nil || len(names) == 0 {
		t.Fatalf("no Markdown pages in %s: %v", dir, err)
	}
	for i, n := range names {
		names[i] = filepath.Base(n)
	}
	return names
}
