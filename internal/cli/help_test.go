package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/idemctl/idemctl/internal/cli"
	"github.com/idemctl/idemctl/internal/clitest"
)

// Help groups the flags: a command's own, output, write and keyspace flags
// in full; the connection and scan flags by name, explained once in their
// topics; booleans without [=true|false]; every IDEMCTL_ variable listed.
func TestGroupedHelp(t *testing.T) {
	h := clitest.Run(t, nil, "scan", "--help")
	h.MustCode(t, 0)
	for _, want := range []string{"\nFlags:\n", "\nOutput flags:\n", "\nKeyspace flags", "[$IDEMCTL_PRESET]",
		"\nConnection flags (see 'idemctl help connection'):\n  --url --user", "\nScan flags (see 'idemctl help scanning'):\n  --count"} {
		if !strings.Contains(h.Stdout, want) {
			t.Errorf("scan --help lacks %q:\n%s", want, h.Stdout)
		}
	}
	if strings.Contains(h.Stdout, "Redis ACL user") || strings.Contains(h.Stdout, "SCAN COUNT and keys") {
		t.Errorf("scan --help repeats the shared flags in full:\n%s", h.Stdout)
	}
	w := clitest.Run(t, nil, "expire", "--help")
	if !strings.Contains(w.Stdout, "\nWrite flags:\n") || !strings.Contains(w.Stdout, "      --dry-run   ") {
		t.Errorf("expire --help:\n%s", w.Stdout)
	}
	for _, args := range [][]string{{"scan", "--help"}, {"expire", "--help"}, {"ui", "--help"}, {"help", "connection"}, {"help", "scanning"}} {
		if r := clitest.Run(t, nil, args...); strings.Contains(r.Stdout, "true|false") {
			t.Errorf("%v shows [=true|false]", args)
		}
	}
	c := clitest.Run(t, nil, "help", "connection")
	c.MustCode(t, 0)
	for _, want := range []string{"--url", "[$IDEMCTL_URL]", "--profile", "[$IDEMCTL_PROFILE]", "Redis ACL user"} {
		if !strings.Contains(c.Stdout, want) {
			t.Errorf("help connection lacks %q", want)
		}
	}
	e := clitest.Run(t, nil, "help", "environment")
	for _, want := range []string{"IDEMCTL_URL", "IDEMCTL_PROFILE", "IDEMCTL_CONFIG", "IDEMCTL_PRESET", "IDEMCTL_MATCH", "IDEMCTL_USER", "IDEMCTL_KEYSPACE", "NO_COLOR"} {
		if !strings.Contains(e.Stdout, want) {
			t.Errorf("help environment lacks %s", want)
		}
	}
	for _, v := range []string{"-v", "--version"} {
		r := clitest.Run(t, nil, v)
		r.MustCode(t, 0)
		if !strings.HasPrefix(r.Stdout, "idemctl ") {
			t.Errorf("%s: %q", v, r.Stdout)
		}
	}
	if r := clitest.Run(t, nil, "scna"); r.Code != cli.ExitUsage || !strings.Contains(r.Stderr, "did you mean scan") {
		t.Errorf("a typo: exit %d, %q", r.Code, r.Stderr)
	}
}

// IDEMCTL_ variables stand in for their flags: a flag wins over the
// variable, the variable over the profile. The default config file, when
// used, is named on stderr; a file the operator named is not.
func TestEnvironmentVariablesAndConfigNote(t *testing.T) {
	url := clitest.SeededURL(t, 50)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.yaml")
	os.WriteFile(cfg, []byte("profiles:\n  local:\n    url: "+url+"\n  nowhere:\n    url: redis://127.0.0.1:1/0\n"), 0o600)

	env := map[string]string{"IDEMCTL_CONFIG": cfg, "IDEMCTL_PROFILE": "local", "IDEMCTL_PRESET": "atlasmart"}
	r := clitest.Run(t, env, "stats", "-o", "json")
	r.MustCode(t, 0)
	if !strings.Contains(r.Stdout, `"total": 50`) || r.Stderr != "" {
		t.Fatalf("stats from the environment: %s %q", r.Stdout, r.Stderr)
	}
	clitest.Run(t, env, "stats", "--profile", "nowhere", "--dial-timeout", "200ms").MustCode(t, cli.ExitError) // the flag wins
	env["IDEMCTL_URL"] = "redis://127.0.0.1:1/0"
	r = clitest.Run(t, env, "stats", "--dial-timeout", "200ms")
	r.MustCode(t, cli.ExitError) // the variable wins over the profile, and says so
	if !strings.Contains(r.Stderr, "the URL comes from IDEMCTL_URL, not from profile local") {
		t.Errorf("stderr %q", r.Stderr)
	}

	home := t.TempDir()
	def := filepath.Join(home, ".config", "idemctl", "config.yaml")
	os.MkdirAll(filepath.Dir(def), 0o700)
	os.WriteFile(def, []byte("default_profile: local\nprofiles:\n  local:\n    url: "+url+"\n"), 0o600)
	r = clitest.Run(t, map[string]string{"HOME": home}, "scan", "--preset", "atlasmart", "-o", "ndjson")
	r.MustCode(t, 0)
	if r.Stderr != "idemctl: using config "+def+" (profile local)\n" || strings.Count(r.Stdout, "\n") != 50 {
		t.Errorf("default config: stderr %q, %d records", r.Stderr, strings.Count(r.Stdout, "\n"))
	}
}

// config path says which file and why; config view shows the merged
// settings and never a secret.
func TestConfigPathAndView(t *testing.T) {
	home := t.TempDir()
	r := clitest.Run(t, map[string]string{"HOME": home}, "config", "path")
	r.MustCode(t, 0)
	want := filepath.Join(home, ".config", "idemctl", "config.yaml") + "\n  from:   the default location ($XDG_CONFIG_HOME, else ~/.config)\n  exists: no\n"
	if r.Stdout != want {
		t.Errorf("config path: %q, want %q", r.Stdout, want)
	}
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.yaml")
	os.WriteFile(cfg, []byte(`default_profile: prod
profiles:
  prod:
    url: redis://ops:hunter2-secret@10.0.0.5:6380/2
    writes: true
    scan: {max_keys: 5000, keys_per_sec: 200}
  other:
    password_env: OTHER_PW
keyspaces:
  - name: orders
    preset: atlasmart
    processing_timeout: 20s
    verify:
      command: [hooks/verify-orders, "{idem_key}"]
      env: {PGPASSWORD: pg-secret-value}
`), 0o600)
	r = clitest.Run(t, map[string]string{"IDEMCTL_CONFIG": cfg}, "config", "path", "-o", "json")
	if !strings.Contains(r.Stdout, `"from": "IDEMCTL_CONFIG"`) || !strings.Contains(r.Stdout, `"exists": true`) {
		t.Errorf("config path -o json: %s", r.Stdout)
	}
	r = clitest.Run(t, nil, "config", "view", "--config", cfg, "--count", "300")
	r.MustCode(t, 0)
	for _, want := range []string{"profile: prod", "url: redis://ops@10.0.0.5:6380/2", "password: in the URL (not shown)",
		"enabled: true", "max_keys: 5000", "keys_per_sec: 200", "count: 300", "name: orders", "processing_timeout: 20s", "schema: atlasmart",
		"verify:\n        command:\n            - " + filepath.Join(dir, "hooks/verify-orders") + "\n            - '{idem_key}'\n        timeout: 5s\n        concurrency: 4\n        env:\n            - PGPASSWORD\n"} {
		if !strings.Contains(r.Stdout, want) {
			t.Errorf("config view lacks %q:\n%s", want, r.Stdout)
		}
	}
	if strings.Contains(r.Stdout+r.Stderr, "hunter2") || strings.Contains(r.Stdout+r.Stderr, "pg-secret") {
		t.Fatalf("config view printed a password:\n%s%s", r.Stdout, r.Stderr)
	}
	r = clitest.Run(t, map[string]string{"OTHER_PW": "s3cret-from-env"}, "config", "view", "--config", cfg, "--profile", "other", "-o", "json")
	r.MustCode(t, 0)
	if !strings.Contains(r.Stdout, `"password": "$OTHER_PW (profile)"`) || strings.Contains(r.Stdout, "s3cret") {
		t.Errorf("config view -o json: %s", r.Stdout)
	}
}
