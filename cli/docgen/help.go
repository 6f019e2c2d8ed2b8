// Package docgen draws idemctl's help from the command tree: every
// command's --help, the root help and the help topics, the man pages and
// the Markdown pages (docs/commands), the flag groups they are sectioned
// by, and the commands a mistyped name may have meant. The command layer
// hands it the tree and a Book (the shared flags, the exit codes, the
// topics, the version); it holds no command state.
//
// Floor 5 of ARCHITECTURE.md, with the command layer it serves: it imports
// no idemctl package (cobra and pflag only), and never cli/ itself.
package docgen

import (
	"cmp"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// Book is what the pages need beside the command tree: what every command
// shares, the exit codes, the topics and the version. The command layer
// fills it; the pages are drawn from it and the tree alone.
type Book struct {
	Version   string
	Shared    *pflag.FlagSet // the connection, keyspace and scan flags as every command registers them
	ExitCodes []ExitCode
	Topics    []Topic // 'idemctl help TOPIC'
}

// ExitCode is one exit code: a few words for --help (Short) and its
// meaning in full, for the man page and the README.
type ExitCode struct {
	Code    int
	Short   string // a few words, for --help
	Meaning string
}

// Topic is a help topic and its summary.
type Topic struct{ Name, Short string }

// CommandHelp is every command's --help: usage, description, its own
// flags in full by section, and the shared connection and scan flags by
// name with the topic that explains them.
func CommandHelp(w io.Writer, c *cobra.Command) {
	fmt.Fprintf(w, "Usage: %s\n", c.UseLine())
	if len(c.Aliases) > 0 {
		fmt.Fprintf(w, "Aliases: %s\n", strings.Join(c.Aliases, ", "))
	}
	if about := strings.TrimSpace(cmp.Or(c.Long, c.Short)); about != "" {
		fmt.Fprintf(w, "\n%s\n", about)
	}
	if c.HasAvailableSubCommands() {
		fmt.Fprintln(w, "\nCommands:")
		for _, sub := range c.Commands() {
			if sub.IsAvailableCommand() {
				fmt.Fprintf(w, "  %-12s %s\n", sub.Name(), sub.Short)
			}
		}
	}
	groups := GroupedFlags(c.LocalFlags())
	for _, g := range groupTitles {
		flags := groups[g.group]
		if len(flags) == 0 {
			continue
		}
		switch {
		case g.topic != "":
			fmt.Fprintf(w, "\n%s (see 'idemctl help %s'):\n%s", g.title, g.topic, flagNames(flags))
		case EnvGroup(g.group):
			fmt.Fprintf(w, "\n%s (each also read from $IDEMCTL_<FLAG>; a flag wins):\n%s", g.title, FlagTable(flags, true))
		default:
			fmt.Fprintf(w, "\n%s:\n%s", g.title, FlagTable(flags, false))
		}
	}
	if groups[GroupConnection] != nil {
		fmt.Fprintln(w, "\nEnvironment: IDEMCTL_URL, IDEMCTL_PROFILE, IDEMCTL_CONFIG, … stand in for their flags (see 'idemctl help environment').")
	}
	if c.HasAvailableSubCommands() {
		fmt.Fprintf(w, "\nRun '%s COMMAND --help' for a command's flags.\n", c.CommandPath())
	}
}

// RootHelp is 'idemctl help' and 'idemctl --help': the commands by group,
// the topics, and the exit codes in a few words.
func (b Book) RootHelp(w io.Writer, root *cobra.Command) {
	fmt.Fprintln(w, "idemctl — inspect and repair Redis idempotency records")
	fmt.Fprintln(w, "\nUsage: idemctl COMMAND [flags]")
	fmt.Fprintln(w, "       idemctl [--profile NAME …]   the terminal UI (the default on a terminal)")
	for _, g := range root.Groups() {
		fmt.Fprintf(w, "\n%s\n", g.Title)
		for _, c := range root.Commands() {
			if c.GroupID == g.ID && (c.IsAvailableCommand() || c.Name() == "help") {
				fmt.Fprintf(w, "  %-11s %s\n", c.Name(), c.Short)
			}
		}
	}
	fmt.Fprintln(w, "\nHelp topics ('idemctl help TOPIC'):")
	for _, t := range b.Topics {
		fmt.Fprintf(w, "  %-11s %s\n", t.Name, t.Short)
	}
	fmt.Fprintln(w, "\nFlags:\n  -h, --help      this help\n  -v, --version   print the version")
	fmt.Fprintln(w, "\nRun 'idemctl COMMAND --help' for a command's flags.")
	fmt.Fprint(w, "\n"+b.exitCodesSummary())
}

// exitCodesSummary is the end of the root help: every exit code in a few
// words, from the exit codes' table, and where each is explained in full. A line
// never parts a code from its words.
func (b Book) exitCodesSummary() string {
	const nbsp = "\x00"
	parts := make([]string, 0, len(b.ExitCodes))
	for _, e := range b.ExitCodes {
		parts = append(parts, strings.ReplaceAll(fmt.Sprintf("%d %s", e.Code, e.Short), " ", nbsp))
	}
	text := "Exit codes: " + strings.Join(parts, ", ") + " (each in full: 'man idemctl', after 'idemctl man --install')."
	return strings.ReplaceAll(WrapWords(text, 80, ""), nbsp, " ")
}
