package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/idemctl/idemctl/internal/redistest"
)

// Every command's documented exit codes, produced for real: usage errors
// are 2 and come before any connection, policy refusals are 4. Exit 3 (a
// scan cut short) is TestScanIncompleteWhenServerDies and TestCheckIncomplete*;
// 130 is TestInterruptedScanExits130.
func TestExitCodesPerCommand(t *testing.T) {
	srv := redistest.Shared(t)
	url := srv.URL(0)
	port, _ := redistest.FreePort()
	down := "redis://127.0.0.1:" + strconv.Itoa(port) + "/0"
	key := cliKey + "-exit"
	reserve(t, srv, key, "body")
	state := map[string]string{"XDG_STATE_HOME": t.TempDir()}
	ks := []string{"--url", url, "--preset", "atlasmart"}
	cfg := filepath.Join(t.TempDir(), "config.yaml")
	os.WriteFile(cfg, []byte("profiles:\n  local:\n    url: "+url+"\n"), 0o600)

	cases := []struct {
		name string
		env  map[string]string
		args []string
		code int
	}{
		{"scan ok", nil, append([]string{"scan"}, ks...), exitOK},
		{"scan unreachable", nil, []string{"scan", "--url", down, "--preset", "atlasmart"}, exitError},
		{"scan bad flag", nil, []string{"scan", "--bogus"}, exitUsage},
		{"scan bad argument", nil, append([]string{"scan", "extra"}, ks...), exitUsage},
		{"scan bad env", map[string]string{"IDEMCTL_DIAL_TIMEOUT": "soon"}, append([]string{"scan"}, ks...), exitUsage},
		{"stats ok", nil, append([]string{"stats"}, ks...), exitOK},
		{"stats unreachable", nil, []string{"stats", "--url", down, "--preset", "atlasmart"}, exitError},
		{"stats bad --top", nil, append([]string{"stats", "--top", "0"}, ks...), exitUsage},
		{"check ok", nil, append([]string{"check", "--max-stale", "10"}, ks...), exitOK},
		{"check negative threshold", nil, append([]string{"check", "--max-no-ttl", "-1"}, ks...), exitUsage},
		{"check threshold", nil, append([]string{"check", "--max-memory", "1"}, ks...), exitThreshold},
		{"check no threshold", nil, append([]string{"check"}, ks...), exitUsage},
		{"check unreachable", nil, []string{"check", "--url", down, "--preset", "atlasmart", "--max-stale", "0"}, exitError},
		{"doctor bad --require-fsync", nil, append([]string{"doctor", "--require-fsync", "sometimes"}, ks...), exitUsage},
		{"doctor critical (no persistence)", nil, append([]string{"doctor"}, ks...), exitDoctorCritical},
		{"doctor unreachable", nil, []string{"doctor", "--url", down, "--preset", "atlasmart"}, exitError},
		{"detect ok", nil, []string{"detect", "--url", url, "--match", "atlasmart:*"}, exitOK},
		{"detect no --match", nil, []string{"detect", "--url", url}, exitUsage},
		{"detect unreachable", nil, []string{"detect", "--url", down, "--match", "x"}, exitError},
		{"exporter bad interval", nil, append([]string{"exporter", "--interval", "10ms"}, ks...), exitUsage},
		{"exporter non-loopback", nil, append([]string{"exporter", "--listen", "192.0.2.1:9481"}, ks...), exitRefused},
		{"expire no --ttl", state, append([]string{"expire", key, "--reason", "x"}, ks...), exitUsage},
		{"expire no --reason", state, append([]string{"expire", key, "--ttl", "1m"}, ks...), exitUsage},
		{"expire no keys", state, append([]string{"expire", "--ttl", "1m", "--reason", "x"}, ks...), exitUsage},
		{"expire writes off", state, append([]string{"expire", key, "--ttl", "1m", "--reason", "x"}, ks...), exitRefused},
		{"expire dry run", state, append([]string{"expire", key, "--ttl", "1m", "--reason", "x", "--dry-run"}, ks...), exitOK},
		{"expire not found", state, append([]string{"expire", key + "-gone", "--ttl", "1m", "--reason", "x", "--write", "--yes"}, ks...), exitNotFound},
		{"expire conflict", state, append([]string{"expire", key, "--ttl", "1m", "--reason", "x", "--write", "--yes", "--expect-state", "SUCCEEDED"}, ks...), exitConflict},
		{"expire partial", state, append([]string{"expire", key, key + "-gone", "--ttl", "10m", "--reason", "x", "--write", "--yes"}, ks...), exitPartial},
		{"fail not confirmed", state, append([]string{"fail", key, "--reason", "x", "--write"}, ks...), exitRefused},
		{"fail bad --ttl", state, append([]string{"fail", key, "--reason", "x", "--ttl", "soon"}, ks...), exitUsage},
		{"reconcile no --ref", state, append([]string{"reconcile", key, "--reason", "x", "--write", "--yes"}, ks...), exitUsage},
		{"reconcile writes off", state, append([]string{"reconcile", key, "--reason", "x", "--ref", "ord-1"}, ks...), exitRefused},
		{"seed bad preset", nil, []string{"seed", "--url", url, "--preset", "nope"}, exitUsage},
		{"seed non-loopback", nil, []string{"seed", "--url", "redis://192.0.2.1:6379", "--count", "1"}, exitRefused},
		{"seed unreachable", nil, []string{"seed", "--url", down, "--count", "1"}, exitError},
		{"presets ok", nil, []string{"presets", "-o", "json"}, exitOK},
		{"presets bad output", nil, []string{"presets", "-o", "xml"}, exitUsage},
		{"version ok", nil, []string{"version", "-o", "json"}, exitOK},
		{"version bad output", nil, []string{"version", "-o", "xml"}, exitUsage},
		{"-v", nil, []string{"-v"}, exitOK},
		{"config path", nil, []string{"config", "path"}, exitOK},
		{"config view", nil, []string{"config", "view", "--config", cfg}, exitOK},
		{"config view unknown profile", nil, []string{"config", "view", "--config", cfg, "--profile", "prod"}, exitUsage},
		{"config view absent file", nil, []string{"config", "view", "--config", cfg + ".absent"}, exitUsage},
		{"config unknown subcommand", nil, []string{"config", "nope"}, exitUsage},
		{"completion bash", nil, []string{"completion", "bash"}, exitOK},
		{"completion unknown shell", nil, []string{"completion", "tcsh"}, exitUsage},
		{"ui without a terminal", nil, append([]string{"ui"}, ks...), exitUsage},
		{"demo without a terminal", nil, []string{"demo"}, exitUsage},
		{"help topic", nil, []string{"help", "connection"}, exitOK},
		{"help unknown", nil, []string{"help", "nope"}, exitUsage},
		{"unknown command", nil, []string{"nope"}, exitUsage},
	}
	for _, c := range cases {
		r := runCLI(t, c.env, c.args...)
		if r.code != c.code {
			t.Errorf("%s: idemctl %s: exit %d, want %d\nstderr: %s", c.name, strings.Join(c.args, " "), r.code, c.code, r.stderr)
		}
		if c.code == exitUsage || c.code == exitError { // writes also show their plan on stderr
			r.oneLineErr(t)
		}
	}
}

// The README's exit-code table is the one idemctl(1) prints.
func TestExitCodesMatchTheREADME(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join(repoRoot, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, _ := strings.Cut(string(readme), "\n## Exit codes\n")
	section, _, _ = strings.Cut(section, "\n## ")
	rows := regexp.MustCompile(`(?m)^\| (\d+) \| (.+) \|$`).FindAllStringSubmatch(section, -1)
	if len(rows) != len(exitCodeTable) {
		t.Fatalf("README lists %d exit codes, exitCodeTable %d", len(rows), len(exitCodeTable))
	}
	for i, row := range rows {
		want := exitCodeTable[i]
		if row[1] != strconv.Itoa(want.code) || row[2] != want.meaning {
			t.Errorf("README row %d: %s %q; exitCodeTable: %d %q", i, row[1], row[2], want.code, want.meaning)
		}
	}
}

// Ctrl-C in the middle of a scan: what was read is printed, exit 130.
func TestInterruptedScanExits130(t *testing.T) {
	srv := redistest.Shared(t)
	runCLI(t, nil, "seed", "--url", srv.URL(0), "--count", "2000").mustCode(t, 0)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out := &fltWatch{hook: cancel}
	var errb bytes.Buffer
	code := Run(ctx, testIO(t, nil, "", out, &errb), []string{"scan", "--url", srv.URL(0), "--preset", "atlasmart",
		"--count", "10", "--keys-per-sec", "200"})
	if code != exitInterrupt || !strings.Contains(errb.String(), "interrupted") {
		t.Fatalf("exit %d, stderr %q", code, errb.String())
	}
}
