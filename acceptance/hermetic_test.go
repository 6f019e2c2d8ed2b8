package acceptance

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/idemctl/idemctl/internal/testkit/clitest"
	"github.com/idemctl/idemctl/internal/testkit/redistest"
)

// Every binary the suites start runs in the environment clitest.Environ
// builds, so the user's own files and variables never change a result:
// with a hostile home (an idemctl config of an old shape, a ~/.tmux.conf
// that resizes the pane and plants variables), a hostile XDG_CONFIG_HOME
// and hostile IDEMCTL_*, REDISCLI_* and terminal variables in the test
// process, the built binary's scan, stats and config path, and the UI in
// tmux, show exactly what they show without them. Controls show each
// hostile piece bites a program that inherits the process's environment.
func TestHermeticBinaryRuns(t *testing.T) {
	bin := clitest.BuildBinary(t)
	url := redistest.Shared(t).URL(0)
	timing := []string{"--reserve-ttl", "1h", "--processing-timeout", "10m"} // no record changes state while the test runs
	clitest.Seed(t, url, 300, timing...)
	ks := append([]string{"--url", url, "--preset", "atlasmart"}, timing...)
	commands := [][]string{
		append([]string{"scan", "-o", "ndjson"}, ks...),
		append([]string{"stats", "-o", "json"}, ks...),
		{"config", "path", "-o", "json"},
	}
	runBinary := func() []string {
		var out []string
		for _, args := range commands {
			cmd := clitest.Command(t, bin, args...)
			home := ""
			for _, kv := range cmd.Env {
				if v, ok := strings.CutPrefix(kv, "HOME="); ok {
					home = v
				}
			}
			var stdout, stderr strings.Builder
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			code := -1
			if err := cmd.Run(); cmd.ProcessState != nil {
				code = cmd.ProcessState.ExitCode()
			} else {
				t.Fatalf("%s: %v", args[0], err)
			}
			res := args[0] + ": exit " + strconv.Itoa(code) + " " + hermeticStable(args[0], stdout.String()) + " | " + stderr.String()
			out = append(out, strings.ReplaceAll(res, home, "$HOME"))
		}
		return out
	}
	runUI := func() string {
		s := newTmux(t, 80, 24, bin+" ui "+strings.Join(ks, " ")+" --match 'atlasmart:ch23:idem:*'; echo EXITED:$?; sleep 60")
		defer s.tmux("kill-session", "-t", s.name)
		scr := s.waitFor("first scan", "✓ 300 records")
		size := s.tmux("display", "-p", "-t", s.name, "#{pane_width}x#{pane_height}")
		s.send("q")
		s.waitFor("quit", "EXITED:0")
		return size + maskScreen(scr)
	}

	cleanBin, cleanUI := runBinary(), runUI()
	for _, c := range cleanBin {
		if !strings.Contains(c, ": exit 0 ") {
			t.Fatalf("fails in a clean environment: %s", c)
		}
	}

	home, xdg := t.TempDir(), t.TempDir()
	old := "scan: {max_keys: 3}\ndefault_profile: bogus\nprofiles:\n  bogus:\n    url: redis://127.0.0.1:1/0\n"
	tmuxConf := "set -g pane-border-status top\nset -g default-terminal dumb\nset -g default-shell /bin/false\nset -g remain-on-exit on\nset-environment -g IDEMCTL_URL redis://127.0.0.1:1/0\n"
	for path, doc := range map[string]string{
		filepath.Join(home, ".config", "idemctl", "config.yaml"): old,
		filepath.Join(xdg, "idemctl", "config.yaml"):             old,
		filepath.Join(home, "bogus.yaml"):                        "profiles: [this is not a map\n",
		filepath.Join(home, ".tmux.conf"):                        tmuxConf,
		filepath.Join(xdg, "tmux", "tmux.conf"):                  tmuxConf,
	} {
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for k, v := range map[string]string{
		"HOME": home, "XDG_CONFIG_HOME": xdg, "XDG_STATE_HOME": filepath.Join(home, "state"), "XDG_CACHE_HOME": filepath.Join(home, "cache"),
		"IDEMCTL_URL": "redis://127.0.0.1:1/0", "IDEMCTL_PROFILE": "bogus", "IDEMCTL_CONFIG": filepath.Join(home, "bogus.yaml"),
		"IDEMCTL_PRESET": "nope", "IDEMCTL_MATCH": "nothing:*", "IDEMCTL_OUTPUT": "table", "IDEMCTL_RESERVE_TTL": "1s",
		"REDISCLI_AUTH": "hunter2", "NO_COLOR": "1", "COLORTERM": "truecolor", "TERM": "dumb", "COLUMNS": "20", "LINES": "5",
		"LANG": "C", "LC_ALL": "C", "SHELL": "/bin/false", "TMUX": "/tmp/hostile,1,0", "TMUX_TMPDIR": xdg,
	} {
		t.Setenv(k, v)
	}

	if got := runBinary(); strings.Join(got, "\n") != strings.Join(cleanBin, "\n") {
		t.Errorf("the built binary's results changed with a hostile environment:\nclean:\n%s\nhostile:\n%s",
			strings.Join(cleanBin, "\n"), strings.Join(got, "\n"))
	}
	if got := runUI(); got != cleanUI {
		t.Errorf("the UI in tmux changed with a hostile environment:\nclean:\n%s\nhostile:\n%s", cleanUI, got)
	}
	if _, err := os.Stat(filepath.Join(home, "state")); !os.IsNotExist(err) {
		t.Error("something wrote under the process's XDG_STATE_HOME")
	}

	// The controls: a binary that inherits the process's environment reads
	// the hostile config; a tmux that does reads the hostile ~/.tmux.conf.
	cmd := exec.Command(bin, commands[1]...)
	if out, err := cmd.CombinedOutput(); err == nil {
		t.Fatalf("the hostile environment had no effect on a binary inheriting it:\n%s", out)
	}
	sock := "idemctl-hermetic-control-" + strconv.Itoa(os.Getpid())
	tmux := func(args ...string) string {
		c := exec.Command("tmux", append([]string{"-L", sock}, args...)...)
		c.Env = append(os.Environ(), "TMUX=") // the planted TMUX would refuse a nested session
		out, err := c.CombinedOutput()
		if err != nil {
			t.Fatalf("control tmux %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	tmux("new-session", "-d", "-s", "control", "-x", "80", "-y", "24", "sleep 60")
	t.Cleanup(func() { exec.Command("tmux", "-L", sock, "kill-server").Run() })
	if got := tmux("display", "-p", "-t", "control", "#{pane_height} #{default-shell} #{default-terminal}"); got != "23 /bin/false dumb" {
		t.Fatalf("the hostile ~/.tmux.conf had no effect on a tmux inheriting the environment: %q", got)
	}
}

// hermeticStable keeps what a command's output says about the data,
// dropping what moves on its own (TTLs, ages, durations).
func hermeticStable(cmd, stdout string) string {
	switch cmd {
	case "scan":
		var keys []string
		for _, l := range strings.Split(strings.TrimSpace(stdout), "\n") {
			var rec struct{ Key, State string }
			if json.Unmarshal([]byte(l), &rec) != nil {
				return "not ndjson: " + stdout
			}
			keys = append(keys, rec.Key+"="+rec.State)
		}
		sort.Strings(keys)
		return strconv.Itoa(len(keys)) + " records " + strings.Join(keys, ",")
	case "stats":
		var st clitest.StatsOut
		if json.Unmarshal([]byte(stdout), &st) != nil {
			return "not json: " + stdout
		}
		b, _ := json.Marshal([]any{st.Total, st.ByState, st.Stale, st.Flags, st.Complete})
		return string(b)
	}
	return stdout
}

// moving is what changes between two runs of the same view: durations
// (ages, TTLs, how long the scan took), the clock, the scan rate.
var moving = regexp.MustCompile(`\b([0-9]+(\.[0-9]+)?(ms|µs|h|m|s))+\b|[0-9]{2}:[0-9]{2}:[0-9]{2}|[0-9,]+/s`)

// maskScreen is a screen without what moves, its words one space apart.
func maskScreen(scr string) string {
	var out []string
	for _, l := range strings.Split(scr, "\n") {
		out = append(out, strings.Join(strings.Fields(moving.ReplaceAllString(l, "#")), " "))
	}
	return strings.Join(out, "\n")
}
