// Package cli is idemctl's command layer: the subcommands, their flags and
// output, on top of inspect (reading), actions (the one write path) and ui
// (the terminal UI). main.go only calls Main.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/redis/go-redis/v9"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/internal/buildinfo"
)

// version is this build's, as every output names it (internal/buildinfo).
var version = buildinfo.Read().Short()

// app is the process's view of the outside world, built from an IO: no
// command reads the environment, the home directory, the OS user or the
// terminal any other way.
type app struct {
	stdin        io.Reader
	stdout       io.Writer
	stderr       io.Writer
	getenv       func(string) string
	isTTY        bool // stdout is a terminal
	inTTY        bool // stdin is a terminal
	errTTY       bool // stderr is a terminal: progress lines
	user         func() string
	host         func() string
	readPassword func(prompt string) (string, error)

	configNoted bool // the config file in use has been named on stderr
	// fromEnv names the IDEMCTL_… variable each flag was taken from.
	fromEnv map[string]string
	// runF, set only by tests, runs in place of a command's run, with its
	// options resolved (gh's NewCmdX(f, runF)): flags → options, checked
	// without a server.
	runF func(cmd command, args []string) error
}

func newApp(o IO) *app {
	a := &app{stdin: o.Stdin, stdout: o.Stdout, stderr: o.Stderr, getenv: o.Getenv,
		isTTY: o.StdoutTTY, inTTY: o.StdinTTY, errTTY: o.StderrTTY, user: o.User, host: o.Host, readPassword: o.ReadPassword}
	if a.stdin == nil {
		a.stdin = strings.NewReader("")
	}
	if a.stdout == nil {
		a.stdout = io.Discard
	}
	if a.stderr == nil {
		a.stderr = io.Discard
	}
	if a.getenv == nil {
		a.getenv = func(string) string { return "" }
	}
	if a.user == nil {
		a.user = func() string { return "" }
	}
	if a.host == nil {
		a.host = func() string { return "" }
	}
	if a.readPassword == nil {
		a.readPassword = func(string) (string, error) { return "", errors.New("no terminal to read it from") }
	}
	return a
}

// go-redis must not write into our output or the TUI.
func init() {
	redis.SetLogger(silentLogger{})
	cobra.EnableCommandSorting = false // commands in the order the help groups them
}

type silentLogger struct{}

func (silentLogger) Printf(context.Context, string, ...any) {}

// run dispatches a command line and turns any error into one line on stderr
// and an exit code. It never panics out: a bug becomes exit 1 with a message.
func (a *app) run(ctx context.Context, args []string) (code int) {
	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintf(a.stderr, "idemctl: internal error: %s (please report it)\n", inspect.Line(fmt.Sprint(r)))
			code = ExitError
		}
	}()
	switch {
	case len(args) == 0 && a.isTTY && a.inTTY:
		args = []string{"ui"} // plain idemctl on a terminal opens the TUI
	case len(args) == 0:
		args = []string{"--help"}
	case args[0] != "-h" && args[0] != "--help" && args[0] != "-v" && args[0] != "--version" &&
		len(args[0]) > 1 && args[0][0] == '-':
		args = append([]string{"ui"}, args...) // idemctl [--profile NAME …] opens the TUI
	}
	root := newRoot(a)
	if args[0] == cobra.ShellCompRequestCmd || args[0] == cobra.ShellCompNoDescRequestCmd {
		a.registerCompletions(root)
	}
	root.SetArgs(args)
	cmd, err := root.ExecuteContextC(ctx)
	name := "idemctl"
	if cmd != nil && cmd != root {
		name = cmd.CommandPath()
	}
	return a.finish(ctx, name, err)
}

func (a *app) finish(ctx context.Context, name string, err error) int {
	switch {
	case err == nil:
		return ExitOK
	case errors.Is(err, pflag.ErrHelp):
		return ExitOK
	case ctx.Err() != nil && errors.Is(err, context.Canceled):
		fmt.Fprintln(a.stderr, "idemctl: interrupted")
		return ExitInterrupt
	}
	if msg := inspect.Line(err.Error()); msg != "" {
		fmt.Fprintf(a.stderr, "%s: %s\n", name, msg)
	}
	return exitCode(err)
}

// origin names this host and idemctl, for an audit chain's genesis entry.
func (a *app) origin() string {
	h := a.host()
	if h == "" {
		h = "unknown"
	}
	return "host " + h + ", idemctl " + version
}
