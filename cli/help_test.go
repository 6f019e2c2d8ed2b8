package cli_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/idemctl/idemctl/cli"
	"github.com/idemctl/idemctl/internal/testkit/clitest"
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
		{"output formats", nil, []string{"scan", "-o", ""}, "table json ndjson pinned"},
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
		t.Fatal("bash-completion is not installed: install it with `apt-get install -y bash-completion` or run `bash .ci/test`")
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
	cmd.Env = clitest.Environ(t, "PATH="+filepath.Dir(bin)+":/usr/bin:/bin", "HOME="+dir, "IDEMCTL_CONFIG="+cfg,
		"BASH_COMPLETION="+bashCompletion, "SCRIPT="+script)
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

// idemctl man DIR writes a page per command from the same definitions as
// --help, and groff renders each without a warning.
func TestManPages(t *testing.T) {
	dir := t.TempDir()
	clitest.Run(t, nil, "man", dir).MustCode(t, 0)
	for _, name := range []string{"idemctl", "idemctl-scan", "idemctl-stats", "idemctl-check", "idemctl-detect", "idemctl-exporter",
		"idemctl-ui", "idemctl-expire", "idemctl-fail", "idemctl-reconcile", "idemctl-seed", "idemctl-presets", "idemctl-demo",
		"idemctl-config", "idemctl-config-path", "idemctl-config-view", "idemctl-version", "idemctl-completion",
		"idemctl-completion-bash", "idemctl-help"} {
		b, err := os.ReadFile(filepath.Join(dir, name+".1"))
		if err != nil {
			t.Errorf("no page for %s: %v", name, err)
			continue
		}
		page := string(b)
		if !strings.HasPrefix(page, ".TH "+strings.ToUpper(name)+" 1 ") || !strings.Contains(page, ".SH NAME\n"+strings.ReplaceAll(name, "-", `\-`)+` \- `) {
			t.Errorf("%s: bad header:\n%.300s", name, page)
		}
		if strings.Contains(page, "true|false") {
			t.Errorf("%s: a boolean shows [=true|false]", name)
		}
	}
	pages, _ := filepath.Glob(filepath.Join(dir, "*.1"))
	for _, p := range pages {
		if b, _ := os.ReadFile(p); strings.Contains(string(b), "`") {
			t.Errorf("%s shows a literal backtick: inline code is bold in a man page", filepath.Base(p))
		}
	}
	root, _ := os.ReadFile(filepath.Join(dir, "idemctl.1"))
	scan, _ := os.ReadFile(filepath.Join(dir, "idemctl-scan.1"))
	for _, want := range []string{".SH EXIT STATUS", ".B 130", "IDEMCTL_PROFILE", ".SH CONNECTION FLAGS", `\fB\-\-dial\-timeout\fR`, `\fB\-\-max\-keys\fR`} {
		if !strings.Contains(string(root), want) {
			t.Errorf("idemctl.1 lacks %q", want)
		}
	}
	for _, want := range []string{`\fB\-\-limit\fR`, `\fB\-o\fR, \fB\-\-output\fR`, `\fB\-\-preset\fR`, `[$IDEMCTL_PRESET]`, ".SH CONNECTION FLAGS\n\\-\\-url"} {
		if !strings.Contains(string(scan), want) {
			t.Errorf("idemctl-scan.1 lacks %q", want)
		}
	}
	if strings.Contains(string(scan), `\fB\-\-dial\-timeout\fR`) {
		t.Error("idemctl-scan.1 repeats the connection flags in full: they are in idemctl(1)")
	}
	groff, err := exec.LookPath("groff")
	if err != nil {
		t.Fatal("groff not found: install groff-base (man pages are checked by rendering them)")
	}
	for _, p := range pages {
		out, err := exec.Command(groff, "-man", "-Tutf8", "-ww", "-z", p).CombinedOutput()
		if err != nil || len(out) > 0 {
			t.Errorf("groff %s: %v %s", filepath.Base(p), err, out)
		}
	}
}

// A mistyped command with flags is named first: the flags belong to the
// command meant, not to the one that does not exist.
func TestUnknownCommandBeforeItsFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"sacn", "--stale"}, `idemctl: unknown command "sacn": did you mean scan? (see 'idemctl help')`},
		{[]string{"sacn", "-o", "json", "--stale"}, `idemctl: unknown command "sacn": did you mean scan?`},
		{[]string{"nope", "--stale"}, `idemctl: unknown command "nope" (see 'idemctl help')`},
		{[]string{"xyz"}, `idemctl: unknown command "xyz" (see 'idemctl help')`},
		{[]string{"sc"}, `idemctl: unknown command "sc": did you mean scan? (see 'idemctl help')`},
		{[]string{"audit", "sho", "--run", "x"}, `idemctl audit: unknown command "sho": did you mean show? (see 'idemctl audit --help')`},
		{[]string{"config", "veiw"}, `idemctl config: unknown command "veiw": did you mean view?`},
		{[]string{"scan", "--stale-ish"}, `idemctl scan: unknown flag: --stale-ish`},
	} {
		r := clitest.Run(t, nil, c.args...)
		if r.Code != cli.ExitUsage || !strings.HasPrefix(r.Stderr, c.want) {
			t.Errorf("idemctl %s: exit %d, %q; want %d, %q", strings.Join(c.args, " "), r.Code, r.Stderr, cli.ExitUsage, c.want)
		}
		r.OneLineErr(t)
	}
}

// idemctl man --install puts the pages where man(1) finds a user's own,
// and says whether it will: through PATH (man-db reads D/share/man for a
// D/bin on PATH), MANPATH, or the line to add.
func TestManInstall(t *testing.T) {
	home := t.TempDir()
	pages := filepath.Join(home, ".local", "share", "man")
	for _, c := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"HOME": home, "PATH": "/usr/bin"}, `export MANPATH="` + pages + `:"`},
		{map[string]string{"HOME": home, "PATH": filepath.Join(home, ".local", "bin") + ":/usr/bin"}, "'man idemctl' finds them: " + filepath.Join(home, ".local", "bin") + " is on PATH"},
		{map[string]string{"HOME": home, "MANPATH": "/usr/share/man"}, `export MANPATH="` + pages + `:$MANPATH"`},
		{map[string]string{"HOME": home, "MANPATH": pages + ":/usr/share/man"}, "'man idemctl' finds them: MANPATH holds"},
	} {
		r := clitest.Run(t, c.env, "man", "--install")
		r.MustCode(t, 0)
		if !strings.Contains(r.Stderr, "wrote 39 man pages to "+filepath.Join(pages, "man1")+"\n") || !strings.Contains(r.Stderr, c.want) {
			t.Errorf("man --install with %v: %q; want %q", c.env, r.Stderr, c.want)
		}
	}
	if _, err := os.Stat(filepath.Join(pages, "man1", "idemctl.1")); err != nil {
		t.Fatal(err)
	}
	data := t.TempDir()
	clitest.Run(t, map[string]string{"HOME": home, "XDG_DATA_HOME": data}, "man", "--install").MustCode(t, 0)
	if _, err := os.Stat(filepath.Join(data, "man", "man1", "idemctl-scan.1")); err != nil {
		t.Errorf("XDG_DATA_HOME not followed: %v", err)
	}
	for _, args := range [][]string{{"man"}, {"man", "--install", "/tmp/x"}, {"man", "--install", "--markdown"}} {
		if r := clitest.Run(t, nil, args...); r.Code != cli.ExitUsage {
			t.Errorf("idemctl %v: exit %d %q", args, r.Code, r.Stderr)
		}
	}
}
