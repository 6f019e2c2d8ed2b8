// Package cli is idemctl's command layer: the subcommands, their flags and
// output, on top of inspect (reading), actions (the one write path) and ui
// (the terminal UI). main.go only builds the process's I/O and calls Main.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"sort"
	"strings"
	"syscall"

	"github.com/charmbracelet/x/term"
	"github.com/redis/go-redis/v9"
	"github.com/spf13/pflag"

	"github.com/idemctl/idemctl/internal/units"
)

// version is set at build time with
// -ldflags "-X github.com/idemctl/idemctl/internal/cli.version=…".
var version = "dev"

// app is the process's view of the outside world, injectable for tests.
type app struct {
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
	getenv func(string) string
	isTTY  bool // stdout is a terminal
	inTTY  bool // stdin is a terminal
}

type command struct {
	name    string
	summary string
	run     func(ctx context.Context, a *app, args []string) error
}

func commands() []command {
	return []command{
		{"demo", "try it: the TUI on an embedded Redis with a live simulated application", runDemo},
		{"ui", "the terminal UI (the default when idemctl runs on a terminal)", runUI},
		{"scan", "list idempotency records with state, fingerprint, TTL, memory and flags", runScan},
		{"stats", "cardinality audit: counts by state, flags, memory, TTLs, ages, top groups", runStats},
		{"check", "one scan against thresholds (stale, no TTL, oldest processing…): exit 8 when crossed", runCheck},
		{"exporter", "Prometheus metrics on /metrics from periodic throttled scans", runExporter},
		{"expire", "guarded write: new TTL, or delete (--ttl 0)", runExpire},
		{"fail", "guarded write: force-fail processing records", runFail},
		{"reconcile", "guarded write: mark records reconciled with the source of truth", runReconcile},
		{"seed", "fill a (test) Redis with realistic records, as an application writes them", runSeed},
		{"presets", "list the built-in record formats", runPresets},
		{"detect", "sample keys and propose the record format, with evidence", runDetect},
		{"version", "print the version", runVersion},
		{"help", "show help for a command", nil},
	}
}

// go-redis must not write into our output or the TUI.
func init() { redis.SetLogger(silentLogger{}) }

// Main runs idemctl with the process's own I/O and returns its exit code.
func Main() int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	a := &app{
		stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr, getenv: os.Getenv,
		isTTY: isTerminal(os.Stdout), inTTY: isTerminal(os.Stdin),
	}
	return a.run(ctx, os.Args[1:])
}

type silentLogger struct{}

func (silentLogger) Printf(context.Context, string, ...any) {}

// isTerminal asks the kernel (an ioctl), so /dev/null is not a terminal.
func isTerminal(f *os.File) bool { return term.IsTerminal(f.Fd()) }

// run dispatches a command line and turns any error into one line on stderr
// and an exit code. It never panics out: a bug becomes exit 1 with a message.
func (a *app) run(ctx context.Context, args []string) (code int) {
	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintf(a.stderr, "idemctl: internal error: %v (please report it)\n", r)
			code = exitError
		}
	}()
	if len(args) == 0 && !(a.isTTY && a.inTTY) || len(args) > 0 && (args[0] == "-h" || args[0] == "--help") {
		a.usage(a.stdout)
		return exitOK
	}
	if len(args) == 0 || args[0] != "--version" && len(args[0]) > 1 && args[0][0] == '-' {
		args = append([]string{"ui"}, args...) // idemctl [--profile NAME …] opens the TUI
	}
	name, rest := args[0], args[1:]
	if name == "--version" {
		name = "version"
	}
	if name == "help" {
		return a.help(rest)
	}
	for _, c := range commands() {
		if c.name == name && c.run != nil {
			err := c.run(ctx, a, rest)
			return a.finish(ctx, name, err)
		}
	}
	fmt.Fprintf(a.stderr, "idemctl: unknown command %q (see 'idemctl help')\n", name)
	return exitUsage
}

func (a *app) finish(ctx context.Context, name string, err error) int {
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, pflag.ErrHelp):
		return exitOK
	case ctx.Err() != nil && errors.Is(err, context.Canceled):
		fmt.Fprintln(a.stderr, "idemctl: interrupted")
		return exitInterrupt
	}
	fmt.Fprintf(a.stderr, "idemctl %s: %s\n", name, units.OneLine(err.Error()))
	return exitCode(err)
}

func (a *app) usage(w io.Writer) {
	fmt.Fprintln(w, "idemctl — inspect and repair Redis idempotency records")
	fmt.Fprintln(w, "\nUsage: idemctl COMMAND [flags]")
	fmt.Fprintln(w, "\nCommands:")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-8s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w, "\nRun 'idemctl COMMAND --help' for a command's flags. Exit codes: 0 ok, 1 error,")
	fmt.Fprintln(w, "2 usage/config, 3 incomplete scan, 4 refused, 5 conflict, 6 not found, 7 partial,")
	fmt.Fprintln(w, "8 check threshold crossed, 130 interrupted.")
}

func (a *app) help(args []string) int {
	if len(args) == 0 {
		a.usage(a.stdout)
		return exitOK
	}
	for _, c := range commands() {
		if c.name == args[0] && c.run != nil {
			return a.finish(context.Background(), c.name, c.run(context.Background(), a, []string{"--help"}))
		}
	}
	fmt.Fprintf(a.stderr, "idemctl: unknown command %q\n", args[0])
	return exitUsage
}

// newFlagSet makes a subcommand's flag set with a usage text that lists
// every flag.
func (a *app) newFlagSet(name, synopsis, about string) *pflag.FlagSet {
	fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
	fs.SetOutput(a.stderr)
	fs.SortFlags = false
	fs.Usage = func() {
		fmt.Fprintf(a.stdout, "Usage: idemctl %s %s\n\n%s\n\nFlags:\n%s", name, synopsis, about, fs.FlagUsages())
	}
	return fs
}

// parse parses flags; errors become usage errors naming the command.
func parse(fs *pflag.FlagSet, args []string) error {
	fs.SetOutput(io.Discard) // we print one line ourselves
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return pflag.ErrHelp // pflag has printed the usage
		}
		return usageErr("%v (see 'idemctl %s --help')", err, fs.Name())
	}
	return nil
}

func runVersion(ctx context.Context, a *app, args []string) error {
	fs := a.newFlagSet("version", "", "Print idemctl's version and build.")
	if err := parse(fs, args); err != nil {
		return err
	}
	fmt.Fprintf(a.stdout, "idemctl %s (%s %s/%s)\n", version, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	if bi, ok := debug.ReadBuildInfo(); ok {
		var deps []string
		for _, d := range bi.Deps {
			if strings.Contains(d.Path, "go-redis") || strings.Contains(d.Path, "charm.land") {
				deps = append(deps, d.Path+" "+d.Version)
			}
		}
		sort.Strings(deps)
		for _, d := range deps {
			fmt.Fprintln(a.stdout, "  "+d)
		}
	}
	return nil
}
