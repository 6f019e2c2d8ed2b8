package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"os/user"
	"strings"
	"syscall"

	"github.com/charmbracelet/x/term"
)

// IO is everything idemctl takes from the outside world. Main fills it from
// the process; tests build their own, so no test reads the real
// environment, home directory, user or terminal.
type IO struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	// Getenv reads the environment, including HOME and XDG_* for the
	// default config and audit paths.
	Getenv              func(string) string
	StdinTTY, StdoutTTY bool
	// StderrTTY lets long commands keep a progress line there.
	StderrTTY bool
	// User is the operator's OS user name, for the audit log.
	User func() string
	// Host is the machine's name, for the audit chain's genesis entry.
	Host func() string
	// ReadPassword prompts on the terminal and reads a line without echo.
	ReadPassword func(prompt string) (string, error)
}

// Run runs one idemctl command line and returns its exit code.
func Run(ctx context.Context, o IO, args []string) int {
	return newApp(o).run(ctx, args)
}

// Main runs idemctl with the process's own I/O and returns its exit code.
func Main() int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	exitAfterGrace(ctx, os.Stderr)
	return Run(ctx, ProcessIO(), os.Args[1:])
}

// ProcessIO is the real process's IO.
func ProcessIO() IO {
	return IO{
		Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Getenv: os.Getenv,
		StdinTTY: isTerminal(os.Stdin), StdoutTTY: isTerminal(os.Stdout), StderrTTY: isTerminal(os.Stderr),
		User: osUser,
		Host: func() string { h, _ := os.Hostname(); return h },
		ReadPassword: func(prompt string) (string, error) {
			fmt.Fprint(os.Stderr, prompt)
			b, err := term.ReadPassword(os.Stdin.Fd())
			fmt.Fprintln(os.Stderr)
			return strings.TrimRight(string(b), "\r\n"), err
		},
	}
}

// isTerminal asks the kernel (an ioctl), so /dev/null is not a terminal.
func isTerminal(f *os.File) bool { return term.IsTerminal(f.Fd()) }

func osUser() string {
	if u, err := user.Current(); err == nil {
		return u.Username
	}
	return os.Getenv("USER")
}
