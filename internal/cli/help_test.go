package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/idemctl/idemctl/internal/redistest"
)

// Help groups the flags: a command's own, output, write and keyspace flags
// in full; the connection and scan flags by name, explained once in their
// topics; booleans without [=true|false]; every IDEMCTL_ variable listed.
func TestGroupedHelp(t *testing.T) {
	h := runCLI(t, nil, "scan", "--help")
	h.mustCode(t, 0)
	for _, want := range []string{"\nFlags:\n", "\nOutput flags:\n", "\nKeyspace flags", "[$IDEMCTL_PRESET]",
		"\nConnection flags (see 'idemctl help connection'):\n  --url --user", "\nScan flags (see 'idemctl help scanning'):\n  --count"} {
		if !strings.Contains(h.stdout, want) {
			t.Errorf("scan --help lacks %q:\n%s", want, h.stdout)
		}
	}
	if strings.Contains(h.stdout, "Redis ACL user") || strings.Contains(h.stdout, "SCAN COUNT and keys") {
		t.Errorf("scan --help repeats the shared flags in full:\n%s", h.stdout)
	}
	w := runCLI(t, nil, "expire", "--help")
	if !strings.Contains(w.stdout, "\nWrite flags:\n") || !strings.Contains(w.stdout, "      --dry-run   ") {
		t.Errorf("expire --help:\n%s", w.stdout)
	}
	for _, args := range [][]string{{"scan", "--help"}, {"expire", "--help"}, {"ui", "--help"}, {"help", "connection"}, {"help", "scanning"}} {
		if r := runCLI(t, nil, args...); strings.Contains(r.stdout, "true|false") {
			t.Errorf("%v shows [=true|false]", args)
		}
	}
	c := runCLI(t, nil, "help", "connection")
	c.mustCode(t, 0)
	for _, want := range []string{"--url", "[$IDEMCTL_URL]", "--profile", "[$IDEMCTL_PROFILE]", "Redis ACL user"} {
		if !strings.Contains(c.stdout, want) {
			t.Errorf("help connection lacks %q", want)
		}
	}
	e := runCLI(t, nil, "help", "environment")
	for _, want := range []string{"IDEMCTL_URL", "IDEMCTL_PROFILE", "IDEMCTL_CONFIG", "IDEMCTL_PRESET", "IDEMCTL_MATCH", "IDEMCTL_USER", "IDEMCTL_KEYSPACE", "NO_COLOR"} {
		if !strings.Contains(e.stdout, want) {
			t.Errorf("help environment lacks %s", want)
		}
	}
	for _, v := range []string{"-v", "--version"} {
		r := runCLI(t, nil, v)
		r.mustCode(t, 0)
		if !strings.HasPrefix(r.stdout, "idemctl ") {
			t.Errorf("%s: %q", v, r.stdout)
		}
	}
	if r := runCLI(t, nil, "scna"); r.code != exitUsage || !strings.Contains(r.stderr, "did you mean scan") {
		t.Errorf("a typo: exit %d, %q", r.code, r.stderr)
	}
}

// IDEMCTL_ variables stand in for their flags: a flag wins over the
// variable, the variable over the profile. The default config file, when
// used, is named on stderr; a file the operator named is not.
func TestEnvironmentVariablesAndConfigNote(t *testing.T) {
	srv := redistest.Shared(t)
	runCLI(t, nil, "seed", "--url", srv.URL(0), "--count", "50").mustCode(t, 0)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.yaml")
	os.WriteFile(cfg, []byte("profiles:\n  local:\n    url: "+srv.URL(0)+"\n  nowhere:\n    url: redis://127.0.0.1:1/0\n"), 0o600)

	env := map[string]string{"IDEMCTL_CONFIG": cfg, "IDEMCTL_PROFILE": "local", "IDEMCTL_PRESET": "atlasmart"}
	r := runCLI(t, env, "stats", "-o", "json")
	r.mustCode(t, 0)
	if !strings.Contains(r.stdout, `"total": 50`) || r.stderr != "" {
		t.Fatalf("stats from the environment: %s %q", r.stdout, r.stderr)
	}
	runCLI(t, env, "stats", "--profile", "nowhere", "--dial-timeout", "200ms").mustCode(t, exitError) // the flag wins
	env["IDEMCTL_URL"] = "redis://127.0.0.1:1/0"
	r = runCLI(t, env, "stats", "--dial-timeout", "200ms")
	r.mustCode(t, exitError) // the variable wins over the profile, and says so
	if !strings.Contains(r.stderr, "the URL comes from IDEMCTL_URL, not from profile local") {
		t.Errorf("stderr %q", r.stderr)
	}

	home := t.TempDir()
	def := filepath.Join(home, ".config", "idemctl", "config.yaml")
	os.MkdirAll(filepath.Dir(def), 0o700)
	os.WriteFile(def, []byte("default_profile: local\nprofiles:\n  local:\n    url: "+srv.URL(0)+"\n"), 0o600)
	r = runCLI(t, map[string]string{"HOME": home}, "scan", "--preset", "atlasmart", "-o", "ndjson")
	r.mustCode(t, 0)
	if r.stderr != "idemctl: using config "+def+" (profile local)\n" || strings.Count(r.stdout, "\n") != 50 {
		t.Errorf("default config: stderr %q, %d records", r.stderr, strings.Count(r.stdout, "\n"))
	}
}

// config path says which file and why; config view shows the merged
// settings and never a secret.
func TestConfigPathAndView(t *testing.T) {
	home := t.TempDir()
	r := runCLI(t, map[string]string{"HOME": home}, "config", "path")
	r.mustCode(t, 0)
	want := filepath.Join(home, ".config", "idemctl", "config.yaml") + "\n  from:   the default location ($XDG_CONFIG_HOME, else ~/.config)\n  exists: no\n"
	if r.stdout != want {
		t.Errorf("config path: %q, want %q", r.stdout, want)
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
`), 0o600)
	r = runCLI(t, map[string]string{"IDEMCTL_CONFIG": cfg}, "config", "path", "-o", "json")
	if !strings.Contains(r.stdout, `"from": "IDEMCTL_CONFIG"`) || !strings.Contains(r.stdout, `"exists": true`) {
		t.Errorf("config path -o json: %s", r.stdout)
	}
	r = runCLI(t, nil, "config", "view", "--config", cfg, "--count", "300")
	r.mustCode(t, 0)
	for _, want := range []string{"profile: prod", "url: redis://ops@10.0.0.5:6380/2", "password: in the URL (not shown)",
		"enabled: true", "max_keys: 5000", "keys_per_sec: 200", "count: 300", "name: orders", "processing_timeout: 20s", "schema: atlasmart"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("config view lacks %q:\n%s", want, r.stdout)
		}
	}
	if strings.Contains(r.stdout+r.stderr, "hunter2") {
		t.Fatalf("config view printed a password:\n%s%s", r.stdout, r.stderr)
	}
	r = runCLI(t, map[string]string{"OTHER_PW": "s3cret-from-env"}, "config", "view", "--config", cfg, "--profile", "other", "-o", "json")
	r.mustCode(t, 0)
	if !strings.Contains(r.stdout, `"password": "$OTHER_PW (profile)"`) || strings.Contains(r.stdout, "s3cret") {
		t.Errorf("config view -o json: %s", r.stdout)
	}
}
