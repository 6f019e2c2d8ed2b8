package clitest

import (
	"os"
	"path/filepath"
	"testing"
)

// WriteConfig writes doc as a config file (mode 0600) in a folder of
// the test's own and returns its path.
func WriteConfig(t testing.TB, doc string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
