package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A hook whose executable cannot run is named in one line, found the way
// the hook will be run: a relative path from the config file's folder, a
// bare name through PATH.
func TestHookProblem(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	for _, d := range []string{filepath.Join(dir, "hooks", "folder"), bin} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write := func(path string, mode os.FileMode) {
		if err := os.WriteFile(path, []byte("#!/bin/sh\necho done\n"), mode); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(dir, "hooks", "ok"), 0o755)
	write(filepath.Join(dir, "hooks", "plain"), 0o644)
	write(filepath.Join(bin, "on-path"), 0o755)
	t.Setenv("PATH", bin)

	for _, tc := range []struct{ command, want string }{
		{"hooks/ok", ""},
		{"./hooks/ok", ""},
		{filepath.Join(dir, "hooks", "ok"), ""},
		{"on-path", ""},
		{"examples/verify-orders", "keyspace orders: verify hook " + filepath.Join(dir, "examples", "verify-orders") +
			" (command examples/verify-orders, taken from the config file's folder) does not exist: give an absolute path, or one relative to the config file's folder"},
		{"/nonexistent/verify-orders", "keyspace orders: verify hook /nonexistent/verify-orders does not exist"},
		{"hooks/plain", "keyspace orders: verify hook " + filepath.Join(dir, "hooks", "plain") + " (command hooks/plain, taken from the config file's folder) is not executable: chmod +x it"},
		{"hooks/folder", "is a folder, not an executable"},
		{"verify-orders", "keyspace orders: verify hook verify-orders is not an executable on PATH (a command without a slash is looked up in PATH"},
		{"plain", "is not an executable on PATH"},
	} {
		t.Run(tc.command, func(t *testing.T) {
			doc := "keyspaces:\n  - name: orders\n    preset: atlasmart\n    verify:\n      command: [" + tc.command + ", \"{idem_key}\"]\n  - name: bare\n    preset: setnx\n    match: 'x:*'\n"
			path := filepath.Join(dir, "config.yaml")
			if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
				t.Fatal(err)
			}
			c, err := Load(path)
			if err != nil {
				t.Fatal(err)
			}
			got := c.HookProblem("orders")
			if tc.want == "" && got != "" || !strings.Contains(got, tc.want) || strings.Contains(got, "\n") {
				t.Errorf("command %s:\n got %q\nwant one line holding %q", tc.command, got, tc.want)
			}
			if p := c.HookProblem("bare") + c.HookProblem("ghost"); p != "" {
				t.Errorf("a keyspace without a hook has a problem: %q", p)
			}
		})
	}
}
