package cli_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/idemctl/idemctl/cli"
	"github.com/idemctl/idemctl/internal/testkit/clitest"
	"github.com/idemctl/idemctl/internal/testkit/recordtest"
	"github.com/idemctl/idemctl/internal/testkit/redistest"
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
	recordtest.Reserve(t, srv, key, "body")
	state := map[string]string{"XDG_STATE_HOME": t.TempDir()}
	ks := []string{"--url", url, "--preset", "atlasmart"}
	cfg := clitest.WriteConfig(t, "profiles:\n  local:\n    url: "+url+"\n")

	cases := []struct {
		name string
		env  map[string]string
		args []string
		code int
	}{
		{"scan ok", nil, append([]string{"scan"}, ks...), cli.ExitOK},
		{"scan unreachable", nil, []string{"scan", "--url", down, "--preset", "atlasmart"}, cli.ExitError},
		{"scan bad flag", nil, []string{"scan", "--bogus"}, cli.ExitUsage},
		{"scan bad argument", nil, append([]string{"scan", "extra"}, ks...), cli.ExitUsage},
		{"scan bad env", map[string]string{"IDEMCTL_DIAL_TIMEOUT": "soon"}, append([]string{"scan"}, ks...), cli.ExitUsage},
		{"stats ok", nil, append([]string{"stats"}, ks...), cli.ExitOK},
		{"stats unreachable", nil, []string{"stats", "--url", down, "--preset", "atlasmart"}, cli.ExitError},
		{"stats bad --top", nil, append([]string{"stats", "--top", "0"}, ks...), cli.ExitUsage},
		{"check ok", nil, append([]string{"check", "--max-stale", "10"}, ks...), cli.ExitOK},
		{"check negative threshold", nil, append([]string{"check", "--max-no-ttl", "-1"}, ks...), cli.ExitUsage},
		{"check threshold", nil, append([]string{"check", "--max-memory", "1"}, ks...), cli.ExitThreshold},
		{"check no threshold", nil, append([]string{"check"}, ks...), cli.ExitUsage},
		{"check unreachable", nil, []string{"check", "--url", down, "--preset", "atlasmart", "--max-stale", "0"}, cli.ExitError},
		{"doctor bad --require-fsync", nil, append([]string{"doctor", "--require-fsync", "sometimes"}, ks...), cli.ExitUsage},
		{"doctor critical (no persistence)", nil, append([]string{"doctor"}, ks...), cli.ExitDoctorCritical},
		{"doctor unreachable", nil, []string{"doctor", "--url", down, "--preset", "atlasmart"}, cli.ExitError},
		{"detect ok", nil, []string{"detect", "--url", url, "--match", "atlasmart:*"}, cli.ExitOK},
		{"detect no --match", nil, []string{"detect", "--url", url}, cli.ExitUsage},
		{"detect unreachable", nil, []string{"detect", "--url", down, "--match", "x"}, cli.ExitError},
		{"exporter bad interval", nil, append([]string{"exporter", "--interval", "10ms"}, ks...), cli.ExitUsage},
		{"exporter non-loopback", nil, append([]string{"exporter", "--listen", "192.0.2.1:9481"}, ks...), cli.ExitRefused},
		{"expire no --ttl", state, append([]string{"expire", key, "--reason", "x"}, ks...), cli.ExitUsage},
		{"expire no --reason", state, append([]string{"expire", key, "--ttl", "1m"}, ks...), cli.ExitUsage},
		{"expire no keys", state, append([]string{"expire", "--ttl", "1m", "--reason", "x"}, ks...), cli.ExitUsage},
		{"expire writes off", state, append([]string{"expire", key, "--ttl", "1m", "--reason", "x"}, ks...), cli.ExitRefused},
		{"expire dry run", state, append([]string{"expire", key, "--ttl", "1m", "--reason", "x", "--dry-run"}, ks...), cli.ExitOK},
		{"expire not found", state, append([]string{"expire", key + "-gone", "--ttl", "1m", "--reason", "x", "--write", "--yes"}, ks...), cli.ExitNotFound},
		{"expire conflict", state, append([]string{"expire", key, "--ttl", "1m", "--reason", "x", "--write", "--yes", "--expect-state", "SUCCEEDED"}, ks...), cli.ExitConflict},
		{"expire partial", state, append([]string{"expire", key, key + "-gone", "--ttl", "10m", "--reason", "x", "--write", "--yes"}, ks...), cli.ExitPartial},
		{"fail not confirmed", state, append([]string{"fail", key, "--reason", "x", "--write"}, ks...), cli.ExitRefused},
		{"fail bad --ttl", state, append([]string{"fail", key, "--reason", "x", "--ttl", "soon"}, ks...), cli.ExitUsage},
		{"reconcile no --ref", state, append([]string{"reconcile", key, "--reason", "x", "--write", "--yes"}, ks...), cli.ExitUsage},
		{"reconcile writes off", state, append([]string{"reconcile", key, "--reason", "x", "--ref", "ord-1"}, ks...), cli.ExitRefused},
		{"seed bad preset", nil, []string{"seed", "--url", url, "--preset", "nope"}, cli.ExitUsage},
		{"seed non-loopback", nil, []string{"seed", "--url", "redis://192.0.2.1:6379", "--count", "1"}, cli.ExitRefused},
		{"seed unreachable", nil, []string{"seed", "--url", down, "--count", "1"}, cli.ExitError},
		{"presets ok", nil, []string{"presets", "-o", "json"}, cli.ExitOK},
		{"presets bad output", nil, []string{"presets", "-o", "xml"}, cli.ExitUsage},
		{"version ok", nil, []string{"version", "-o", "json"}, cli.ExitOK},
		{"version bad output", nil, []string{"version", "-o", "xml"}, cli.ExitUsage},
		{"-v", nil, []string{"-v"}, cli.ExitOK},
		{"config path", nil, []string{"config", "path"}, cli.ExitOK},
		{"config view", nil, []string{"config", "view", "--config", cfg}, cli.ExitOK},
		{"config view unknown profile", nil, []string{"config", "view", "--config", cfg, "--profile", "prod"}, cli.ExitUsage},
		{"config view absent file", nil, []string{"config", "view", "--config", cfg + ".absent"}, cli.ExitUsage},
		{"config unknown subcommand", nil, []string{"config", "nope"}, cli.ExitUsage},
		{"completion bash", nil, []string{"completion", "bash"}, cli.ExitOK},
		{"completion unknown shell", nil, []string{"completion", "tcsh"}, cli.ExitUsage},
		{"ui without a terminal", nil, append([]string{"ui"}, ks...), cli.ExitUsage},
		{"demo without a terminal", nil, []string{"demo"}, cli.ExitUsage},
		{"help topic", nil, []string{"help", "connection"}, cli.ExitOK},
		{"help unknown", nil, []string{"help", "nope"}, cli.ExitUsage},
		{"unknown command", nil, []string{"nope"}, cli.ExitUsage},
	}
	for _, c := range cases {
		r := clitest.Run(t, c.env, c.args...)
		if r.Code != c.code {
			t.Errorf("%s: idemctl %s: exit %d, want %d\nstderr: %s", c.name, strings.Join(c.args, " "), r.Code, c.code, r.Stderr)
		}
		if c.code == cli.ExitUsage || c.code == cli.ExitError { // writes also show their plan on stderr
			r.OneLineErr(t)
		}
	}
}

// The README's exit-code table is the one idemctl(1) prints.
func TestExitCodesMatchTheREADME(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join(clitest.RepoRoot, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, _ := strings.Cut(string(readme), "\n## Exit codes\n")
	section, _, _ = strings.Cut(section, "\n## ")
	rows := regexp.MustCompile(`(?m)^\| (\d+) \| (.+) \|$`).FindAllStringSubmatch(section, -1)
	if len(rows) != len(cli.ExitCodeTable) {
		t.Fatalf("README lists %d exit codes, cli.ExitCodeTable %d", len(rows), len(cli.ExitCodeTable))
	}
	for i, row := range rows {
		want := cli.ExitCodeTable[i]
		if row[1] != strconv.Itoa(want.Code) || row[2] != want.Meaning {
			t.Errorf("README row %d: %s %q; cli.ExitCodeTable: %d %q", i, row[1], row[2], want.Code, want.Meaning)
		}
	}
}

// One list of exit codes, said three times alike: the README's table
// (TestExitCodesMatchTheREADME), the end of --help (each code with its
// few words, in order) and idemctl(1)'s EXIT STATUS, rendered by groff as
// man shows it — every code with its whole meaning, no literal backtick.
func TestExitCodesAgreeEverywhere(t *testing.T) {
	help := clitest.Run(t, nil, "--help")
	help.MustCode(t, 0)
	_, codes, _ := strings.Cut(strings.Join(strings.Fields(help.Stdout), " "), "Exit codes: ")
	var want []string
	for _, e := range cli.ExitCodeTable {
		want = append(want, strconv.Itoa(e.Code)+" "+e.Short)
	}
	if !strings.HasPrefix(codes, strings.Join(want, ", ")+" (") || !strings.Contains(codes, "'man idemctl', after 'idemctl man --install'") {
		t.Errorf("--help ends with exit codes %q; want %q, then where the man page is", codes, strings.Join(want, ", "))
	}

	dir := t.TempDir()
	clitest.Run(t, nil, "man", dir).MustCode(t, 0)
	groff, err := exec.LookPath("groff")
	if err != nil {
		t.Fatal("groff not found: install groff-base (man pages are checked by rendering them)")
	}
	out, err := exec.Command(groff, "-man", "-Tutf8", "-rHY=0", "-rLL=300n", "-P-cbou", filepath.Join(dir, "idemctl.1")).Output()
	if err != nil {
		t.Fatal(err)
	}
	_, status, _ := strings.Cut(string(out), "\nEXIT STATUS\n")
	status, _, _ = strings.Cut(status, "\nSEE ALSO\n")
	status = strings.Join(strings.Fields(status), " ")
	if strings.Contains(status, "`") {
		t.Errorf("idemctl(1) shows literal backticks: %s", status)
	}
	var page []string
	for _, e := range cli.ExitCodeTable {
		page = append(page, strconv.Itoa(e.Code)+" "+strings.Join(strings.Fields(strings.ReplaceAll(e.Meaning, "`", "")), " "))
	}
	if status != strings.Join(page, " ") {
		t.Errorf("idemctl(1) EXIT STATUS reads\n%s\nwant\n%s", status, strings.Join(page, " "))
	}
}

// Ctrl-C in the middle of a scan: what was read is printed, exit 130.
func TestInterruptedScanExits130(t *testing.T) {
	url := clitest.SeededURL(t, 2000)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	out := &clitest.Buffer{OnFirstWrite: cancel}
	var errb bytes.Buffer
	code := cli.Run(ctx, clitest.IO(t, nil, "", out, &errb), []string{"scan", "--url", url, "--preset", "atlasmart",
		"--count", "10", "--keys-per-sec", "200"})
	if code != cli.ExitInterrupt || !strings.Contains(errb.String(), "interrupted") {
		t.Fatalf("exit %d, stderr %q", code, errb.String())
	}
}
