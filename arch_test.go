package main

import (
	"os"
	"os/exec"
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
