package docgen

import (
	"fmt"
	"strings"

	"github.com/spf13/pflag"
)

// Flag groups, shown as sections in help and man pages. Connection and
// scan flags are the same on every command: a command's help names them
// and 'idemctl help connection' / 'idemctl help scanning' explain them once.
const (
	GroupAnnotation = "idemctl_group"
	GroupConnection = "connection"
	GroupKeyspace   = "keyspace"
	GroupScan       = "scan"
	GroupWrite      = "write"
	GroupOutput     = "output"
	GroupSnapshot   = "snapshot"
)

// groupTitle and, for shared groups, the help topic that explains them.
var groupTitles = []struct{ group, title, topic string }{
	{"", "Flags", ""},
	{GroupOutput, "Output flags", ""},
	{GroupWrite, "Write flags", ""},
	{GroupKeyspace, "Keyspace flags", ""},
	{GroupScan, "Scan flags", "scanning"},
	{GroupSnapshot, "Snapshot flags", ""},
	{GroupConnection, "Connection flags", "connection"},
}

func SetAnnotation(f *pflag.Flag, key string, values ...string) {
	if f.Annotations == nil {
		f.Annotations = map[string][]string{}
	}
	f.Annotations[key] = values
}

// envGroups are the groups whose flags can also be set as IDEMCTL_<FLAG>.
func EnvGroup(g string) bool { return g == GroupConnection || g == GroupKeyspace }

func FlagGroup(f *pflag.Flag) string {
	if f.Name == "output" {
		return GroupOutput
	}
	if g := f.Annotations[GroupAnnotation]; len(g) > 0 {
		return g[0]
	}
	return ""
}

// EnvName is the variable that stands in for a flag: IDEMCTL_DIAL_TIMEOUT.
func EnvName(flag string) string {
	return "IDEMCTL_" + strings.ToUpper(strings.ReplaceAll(flag, "-", "_"))
}

// GroupedFlags splits a command's flags into its sections, in definition
// order, leaving out --help.
func GroupedFlags(fs *pflag.FlagSet) map[string][]*pflag.Flag {
	out := map[string][]*pflag.Flag{}
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Hidden || f.Name == "help" {
			return
		}
		out[FlagGroup(f)] = append(out[FlagGroup(f)], f)
	})
	return out
}

// FlagTable renders flags as two aligned columns. Booleans show no value
// (pflag's own renderer adds [=true|false]); a default shows only when it
// is not the zero value and the text does not already give one.
func FlagTable(flags []*pflag.Flag, withEnv bool) string {
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
	if withEnv && EnvGroup(FlagGroup(f)) {
		usage += " [$" + EnvName(f.Name) + "]"
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
	return WrapWords(strings.Join(names, " "), 76, "  ")
}

func WrapWords(s string, width int, indent string) string {
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
