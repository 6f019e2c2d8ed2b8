package cli

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// Flag groups, shown as sections in help and man pages. Connection and
// scan flags are the same on every command: a command's help names them
// and 'idemctl help connection' / 'idemctl help scanning' explain them once.
const (
	groupAnnotation = "idemctl_group"
	groupConnection = "connection"
	groupKeyspace   = "keyspace"
	groupScan       = "scan"
	groupWrite      = "write"
	groupOutput     = "output"
	groupSnapshot   = "snapshot"
)

// groupTitle and, for shared groups, the help topic that explains them.
var groupTitles = []struct{ group, title, topic string }{
	{"", "Flags", ""},
	{groupOutput, "Output flags", ""},
	{groupWrite, "Write flags", ""},
	{groupKeyspace, "Keyspace flags", ""},
	{groupScan, "Scan flags", "scanning"},
	{groupSnapshot, "Snapshot flags", ""},
	{groupConnection, "Connection flags", "connection"},
}

// envGroups are the groups whose flags can also be set as IDEMCTL_<FLAG>.
func envGroup(g string) bool { return g == groupConnection || g == groupKeyspace }

// registerGroup registers flags through register and files them under group.
func registerGroup(fs *pflag.FlagSet, group string, register func(*pflag.FlagSet)) {
	g := pflag.NewFlagSet(group, pflag.ContinueOnError)
	g.SortFlags = false
	register(g)
	g.VisitAll(func(f *pflag.Flag) { setAnnotation(f, groupAnnotation, group) })
	fs.AddFlagSet(g)
}

// readFlags are what every command that reads records takes: where to
// connect, which keyspaces, and how hard to scan.
type readFlags struct {
	cf   connFlags
	kf   keyspaceFlags
	sf   scanFlags
	snap snapFlags // only for the commands that registerSnapshot
}

// register adds them in help order: keyspace, scan, connection.
func (r *readFlags) register(fs *pflag.FlagSet) {
	registerGroup(fs, groupKeyspace, r.kf.register)
	registerGroup(fs, groupScan, r.sf.register)
	registerGroup(fs, groupConnection, r.cf.register)
}

// registerSnapshot is register with --rdb, --at and --db: for the
// commands that can read a snapshot file instead of a server.
func (r *readFlags) registerSnapshot(fs *pflag.FlagSet) {
	r.register(fs)
	registerGroup(fs, groupSnapshot, r.snap.register)
}

// resolveFlags records which of every group's flags were given.
func (r *readFlags) resolveFlags(fs *pflag.FlagSet) {
	r.cf.resolveFlags(fs)
	r.kf.resolveFlags(fs)
	r.sf.resolveFlags(fs)
	r.snap.resolveFlags(fs)
}

// givenFlag is one flag the operator gave (on the command line or as
// IDEMCTL_…), as text: what a command line printed for them repeats.
type givenFlag struct {
	name, kind string   // kind: the value's type, as pflag names it
	values     []string // a list flag's items, else the one value
	list       bool
}

// givenFlags are the flags given, in the order they were set (pflag's
// Visit without SortFlags): the command line first, then the environment.
type givenFlags []givenFlag

// flagsGiven takes the flags given from a parsed flag set.
func flagsGiven(fs *pflag.FlagSet) givenFlags {
	var out givenFlags
	fs.Visit(func(f *pflag.Flag) {
		g := givenFlag{name: f.Name, kind: f.Value.Type(), values: []string{f.Value.String()}}
		if sv, ok := f.Value.(pflag.SliceValue); ok {
			g.values, g.list = sv.GetSlice(), true
		}
		out = append(out, g)
	})
	return out
}

func (g givenFlags) has(name string) bool {
	return slices.ContainsFunc(g, func(f givenFlag) bool { return f.name == name })
}

func setAnnotation(f *pflag.Flag, key string, values ...string) {
	if f.Annotations == nil {
		f.Annotations = map[string][]string{}
	}
	f.Annotations[key] = values
}

func flagGroup(f *pflag.Flag) string {
	if f.Name == "output" {
		return groupOutput
	}
	if g := f.Annotations[groupAnnotation]; len(g) > 0 {
		return g[0]
	}
	return ""
}

// envName is the variable that stands in for a flag: IDEMCTL_DIAL_TIMEOUT.
func envName(flag string) string {
	return "IDEMCTL_" + strings.ToUpper(strings.ReplaceAll(flag, "-", "_"))
}

// groupedFlags splits a command's flags into its sections, in definition
// order, leaving out --help.
func groupedFlags(fs *pflag.FlagSet) map[string][]*pflag.Flag {
	out := map[string][]*pflag.Flag{}
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Hidden || f.Name == "help" {
			return
		}
		out[flagGroup(f)] = append(out[flagGroup(f)], f)
	})
	return out
}

// flagTable renders flags as two aligned columns. Booleans show no value
// (pflag's own renderer adds [=true|false]); a default shows only when it
// is not the zero value and the text does not already give one.
func flagTable(flags []*pflag.Flag, withEnv bool) string {
	type row struct{ left, right string }
	rows := make([]row, 0, len(flags))
	width := 0
	for _, f := range flags {
		left := "      --" + f.Name
		if f.Shorthand != "" {
			left = "  -" + f.Shorthand + ", --" + f.Name
		}
		if v := flagValueName(f); v != "" {
			left += " " + v
		}
		width = max(width, len(left))
		rows = append(rows, row{left, flagUsage(f, withEnv)})
	}
	var b strings.Builder
	for _, r := range rows {
		fmt.Fprintf(&b, "%-*s   %s\n", width, r.left, r.right)
	}
	return b.String()
}

func flagValueName(f *pflag.Flag) string {
	name, _ := pflag.UnquoteUsage(f)
	return name
}

func flagUsage(f *pflag.Flag, withEnv bool) string {
	_, usage := pflag.UnquoteUsage(f)
	if d := flagDefault(f); d != "" && !strings.Contains(usage, "(default") {
		usage += " (default " + d + ")"
	}
	if withEnv && envGroup(flagGroup(f)) {
		usage += " [$" + envName(f.Name) + "]"
	}
	return usage
}

func flagDefault(f *pflag.Flag) string {
	switch f.DefValue {
	case "", "0", "false", "[]", "0s":
		return ""
	}
	if f.Value.Type() == "string" {
		return fmt.Sprintf("%q", f.DefValue)
	}
	return f.DefValue
}

// flagNames lists flags compactly: --url, --user, …
func flagNames(flags []*pflag.Flag) string {
	names := make([]string, len(flags))
	for i, f := range flags {
		names[i] = "--" + f.Name
	}
	return wrapWords(strings.Join(names, " "), 76, "  ")
}

func wrapWords(s string, width int, indent string) string {
	var b strings.Builder
	line := indent
	for _, w := range strings.Fields(s) {
		if len(line) > len(indent) && len(line)+1+len(w) > width {
			b.WriteString(line + "\n")
			line = indent
		}
		if len(line) > len(indent) {
			line += " "
		}
		line += w
	}
	if len(line) > len(indent) {
		b.WriteString(line + "\n")
	}
	return b.String()
}

// writeCommandHelp is every command's --help: usage, description, its own
// flags in full by section, and the shared connection and scan flags by
// name with the topic that explains them.
func writeCommandHelp(w io.Writer, c *cobra.Command) {
	fmt.Fprintf(w, "Usage: %s\n", c.UseLine())
	if len(c.Aliases) > 0 {
		fmt.Fprintf(w, "Aliases: %s\n", strings.Join(c.Aliases, ", "))
	}
	if about := strings.TrimSpace(pick(c.Long, c.Short)); about != "" {
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
	groups := groupedFlags(c.LocalFlags())
	for _, g := range groupTitles {
		flags := groups[g.group]
		if len(flags) == 0 {
			continue
		}
		switch {
		case g.topic != "":
			fmt.Fprintf(w, "\n%s (see 'idemctl help %s'):\n%s", g.title, g.topic, flagNames(flags))
		case envGroup(g.group):
			fmt.Fprintf(w, "\n%s (each also read from $IDEMCTL_<FLAG>; a flag wins):\n%s", g.title, flagTable(flags, true))
		default:
			fmt.Fprintf(w, "\n%s:\n%s", g.title, flagTable(flags, false))
		}
	}
	if groups[groupConnection] != nil {
		fmt.Fprintln(w, "\nEnvironment: IDEMCTL_URL, IDEMCTL_PROFILE, IDEMCTL_CONFIG, … stand in for their flags (see 'idemctl help environment').")
	}
	if c.HasAvailableSubCommands() {
		fmt.Fprintf(w, "\nRun '%s COMMAND --help' for a command's flags.\n", c.CommandPath())
	}
}
