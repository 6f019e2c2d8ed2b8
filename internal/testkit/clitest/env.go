package clitest

import (
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// Environ is the whole environment of a program a test starts — the built
// idemctl, or a shell or tmux that runs it — as IO is for idemctl run
// in-process: PATH from the test process (so redis-server and the like are
// found), HOME a fresh empty directory with XDG_CONFIG_HOME, XDG_STATE_HOME,
// XDG_CACHE_HOME and XDG_DATA_HOME under it, TERM=dumb, LANG and LC_ALL
// C.UTF-8, and nothing else of the process's: no IDEMCTL_*, REDISCLI_*,
// NO_COLOR, COLORTERM, COLUMNS, LINES, SHELL or TMUX. So a developer's
// ~/.config/idemctl, ~/.tmux.conf or variables change no result.
//
// Each extra, "K=V", adds a variable or replaces one of these:
// "TERM=tmux-256color" for a terminal, "HOME="+dir for a home the test
// prepared (the XDG folders then follow it unless extra names them too).
func Environ(t testing.TB, extra ...string) []string {
	t.Helper()
	env := map[string]string{
		"PATH": os.Getenv("PATH"), "TERM": "dumb", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8",
	}
	for _, kv := range extra {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			t.Fatalf("clitest.Environ: %q is not K=V", kv)
		}
		env[k] = v
	}
	if env["HOME"] == "" {
		env["HOME"] = t.TempDir()
	}
	for k, dir := range map[string]string{
		"XDG_CONFIG_HOME": ".config", "XDG_STATE_HOME": ".local/state",
		"XDG_CACHE_HOME": ".cache", "XDG_DATA_HOME": ".local/share",
	} {
		if _, named := env[k]; !named {
			env[k] = filepath.Join(env["HOME"], dir)
		}
	}
	out := make([]string, 0, len(env))
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}

// Command is exec.Command(bin, args...) with Environ(t) as its whole
// environment; a test that needs more runs exec.Command with
// cmd.Env = Environ(t, extra...).
func Command(t testing.TB, bin string, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = Environ(t)
	return cmd
}

// EnvPrefix is env as the start of a shell command line, `env -i 'K=V' …`:
// the command that follows it on the line gets exactly env.
func EnvPrefix(env []string) string {
	words := []string{"env", "-i"}
	for _, kv := range env {
		words = append(words, ShellQuote(kv))
	}
	return strings.Join(words, " ")
}

// ShellLine is a shell command line that runs script, a whole line of
// commands (`idemctl demo; echo EXITED:$?`), in /bin/sh with exactly env:
// what a test gives tmux, whose own shell and environment are the user's.
func ShellLine(env []string, script string) string {
	return EnvPrefix(env) + " /bin/sh -c " + ShellQuote(script)
}

// ShellQuote quotes s as one POSIX shell word.
func ShellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
