package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/idemctl/idemctl/internal/testkit/redistest"
)

// The TUI's :profile NAME opens another profile of the config as if started
// with --profile NAME alone: its server and database, its write policy (an
// executor only where the profile allows writes), nothing on the terminal.
func TestUIOpenProfile(t *testing.T) {
	srv := redistest.Shared(t)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.yaml")
	doc := "profiles:\n" +
		"  ro:\n    url: " + srv.URL(3) + "\n    keyspaces: [orders]\n" +
		"  rw:\n    url: " + srv.URL(4) + "\n    writes: true\n    audit_log: " + filepath.Join(dir, "audit.log") + "\n    keyspaces: [orders]\n" +
		"  down:\n    url: redis://127.0.0.1:1/0\n    dial_timeout: 200ms\n" +
		"keyspaces:\n  - name: orders\n    preset: atlasmart\n"
	if err := os.WriteFile(cfg, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	a := newApp(IO{Stderr: &stderr, Getenv: func(k string) string { return map[string]string{"HOME": dir}[k] }})
	o := &uiCmd{}
	o.cf.configPath = cfg
	open := o.openProfile(a)
	ctx := t.Context()

	ro, closeRO, err := open(ctx, "ro")
	if err != nil {
		t.Fatal(err)
	}
	defer closeRO()
	if ro.Profile != "ro" || !strings.HasSuffix(ro.Address, "/3") || ro.Executor.CanWrite() || len(ro.Keyspaces) != 1 || ro.Doctor == nil {
		t.Errorf("ro: profile %q address %q writes %v keyspaces %d", ro.Profile, ro.Address, ro.Executor.CanWrite(), len(ro.Keyspaces))
	}
	rw, closeRW, err := open(ctx, "rw")
	if err != nil {
		t.Fatal(err)
	}
	defer closeRW()
	if !rw.Executor.CanWrite() || !strings.HasSuffix(rw.Address, "/4") {
		t.Errorf("rw: writes %v address %q", rw.Executor.CanWrite(), rw.Address)
	}
	if _, _, err := open(ctx, "nope"); err == nil || !strings.Contains(err.Error(), "nope") {
		t.Errorf("an unknown profile: %v", err)
	}
	if _, _, err := open(ctx, "down"); err == nil || !strings.Contains(err.Error(), "connection refused") {
		t.Errorf("an unreachable profile: %v", err)
	}
	if stderr.Len() != 0 {
		t.Errorf("opening a profile wrote to the terminal: %q", stderr.String())
	}
}
