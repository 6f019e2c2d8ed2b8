package cli_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/idemctl/idemctl/internal/clitest"
)

const completionConfig = `
profiles:
  prod-eu: {url: "redis://127.0.0.1:1/0"}
  staging: {url: "redis://127.0.0.1:2/0"}
keyspaces:
  - {name: orders, preset: atlasmart}
  - {name: payments, preset: setnx}
`

// completions asks cobra's __complete entry, as the shell scripts do, and
// returns the candidates without the trailing directive line.
func completions(t *testing.T, env map[string]string, words ...string) []string {
	t.Helper()
	r := clitest.Run(t, env, append([]string{"__complete"}, words...)...)
	r.MustCode(t, 0)
	var out []string
	for _, l := range strings.Split(strings.TrimSpace(r.Stdout), "\n") {
		if strings.HasPrefix(l, ":") {
			break
		}
		name, _, _ := strings.Cut(l, "\t")
		out = append(out, name)
	}
	return out
}

func TestCompletionValues(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.yaml")
	os.WriteFile(cfg, []byte(completionConfig), 0o600)
	home := t.TempDir()
	os.MkdirAll(filepath.Join(home, ".config", "idemctl"), 0o700)
	os.WriteFile(filepath.Join(home, ".config", "idemctl", "config.yaml"), []byte("profiles:\n  from-home: {}\n"), 0o600)

	cases := []struct {
		name  string
		env   map[string]string
		words []string
		want  string
	}{
		{"profiles from --config", nil, []string{"scan", "--config", cfg, "--profile", ""}, "prod-eu staging"},
		{"profiles from IDEMCTL_CONFIG", map[string]string{"IDEMCTL_CONFIG": cfg}, []string{"stats", "--profile", ""}, "prod-eu staging"},
		{"profiles from the default file", map[string]string{"HOME": home}, []string{"expire", "--profile", ""}, "from-home"},
		{"keyspaces", nil, []string{"check", "--config", cfg, "--keyspace", ""}, "orders payments"},
		{"commands", nil, []string{"sta"}, "stats"},
		{"config subcommands", nil, []string{"config", ""}, "path view"},
		{"output formats", nil, []string{"scan", "-o", ""}, "table json ndjson"},
		{"presets output", nil, []string{"presets", "--output", ""}, "text json"},
		{"states", nil, []string{"scan", "--state", ""}, "processing succeeded failed reconciled expired unknown"},
		{"help topics", nil, []string{"help", "conn"}, "connection"},
	}
	for _, c := range cases {
		got := completions(t, c.env, c.words...)
		var kept []string
		for _, g := range got { // cobra filters by prefix in the shell, not here, for some kinds
			if strings.HasPrefix(g, c.words[len(c.words)-1]) {
				kept = append(kept, g)
			}
		}
		if strings.Join(kept, " ") != c.want {
			t.Errorf("%s: %v, want %s", c.name, got, c.want)
		}
	}
	if got := completions(t, nil, "scan", "--preset", ""); !contains(got, "atlasmart") || !contains(got, "setnx") {
		t.Errorf("presets: %v", got)
	}
	if got := completions(t, nil, "scan", "--"); !contains(got, "--url") || !contains(got, "--profile") || !contains(got, "--limit") {
		t.Errorf("flags: %v", got)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// The bash script, loaded into a real bash with bash-completion: it
// registers itself, and completing --profile runs the binary and offers the
// profiles of the config file in effect.
func TestBashCompletion(t *testing.T) {
	const bashCompletion = "/usr/share/bash-completion/bash_completion"
	if _, err := os.Stat(bashCompletion); err != nil {
		t.Fatal("bash-completion is not installed: install it with `apt-get install -y bash-completion` or run `bash .ci/run`")
	}
	bin := clitest.BuildBinary(t)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.yaml")
	os.WriteFile(cfg, []byte(completionConfig), 0o600)
	script := filepath.Join(dir, "idemctl.bash")
	r := clitest.Run(t, nil, "completion", "bash")
	r.MustCode(t, 0)
	os.WriteFile(script, []byte(r.Stdout), 0o600)

	cmd := exec.Command("bash", "--norc", "--noprofile", "-c", `
source "$BASH_COMPLETION" && source "$SCRIPT" || exit 9
complete -p idemctl
comp() {
  COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]}-1)); COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}; COMPREPLY=()
  __start_idemctl idemctl "${COMP_WORDS[-1]}" "${COMP_WORDS[-2]}" 2>/dev/null
  echo "$* => ${COMPREPLY[*]}"
}
comp idemctl scan --profile ""
comp idemctl scan --profile st
comp idemctl stats --keyspace ""
comp idemctl sc
comp idemctl completion ""
`)
	// The whole environment the shell and the binary see: nothing of ours.
	cmd.Env = []string{"PATH=" + filepath.Dir(bin) + ":/usr/bin:/bin", "HOME=" + dir, "IDEMCTL_CONFIG=" + cfg,
		"BASH_COMPLETION=" + bashCompletion, "SCRIPT=" + script}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("bash: %v\n%s", err, out)
	}
	for _, want := range []string{
		"complete -o default -F __start_idemctl idemctl\n",
		`idemctl scan --profile  => prod-eu staging` + "\n",
		`idemctl scan --profile st => staging` + "\n",
		`idemctl stats --keyspace  => orders payments` + "\n",
		`idemctl sc => scan` + "\n",
		`idemctl completion  => bash zsh fish powershell` + "\n",
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("bash completion lacks %q:\n%s", want, out)
		}
	}
}

// Every shell's script is generated and calls back into idemctl.
func TestCompletionScripts(t *testing.T) {
	for shell, marker := range map[string]string{"bash": "__start_idemctl", "zsh": "#compdef idemctl",
		"fish": "complete -c idemctl", "powershell": "Register-ArgumentCompleter"} {
		r := clitest.Run(t, nil, "completion", shell)
		r.MustCode(t, 0)
		if !strings.Contains(r.Stdout, marker) || !strings.Contains(r.Stdout, "__complete") {
			t.Errorf("%s script lacks %q or the __complete call", shell, marker)
		}
	}
	if out, err := exec.Command("bash", "-n", "-c", clitest.Run(t, nil, "completion", "bash").Stdout).CombinedOutput(); err != nil {
		t.Errorf("bash -n: %v %s", err, out)
	}
}
