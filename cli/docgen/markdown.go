package docgen

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// MarkdownPage renders one command as the Markdown page docs/commands holds:
// the same content as its man page, from the same definitions as --help, and
// no version in it, so the committed pages change only when a command does.
func (bk Book) MarkdownPage(c *cobra.Command) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\n%s\n\n```\n%s\n```\n", c.CommandPath(), mdEscape(c.Short), c.UseLine())
	if about := strings.TrimSpace(c.Long); about != "" && c.HasParent() {
		for _, p := range strings.Split(about, "\n\n") {
			b.WriteString("\n" + mdEscape(strings.Join(strings.Fields(p), " ")) + "\n")
		}
	}
	if subs := availableCommands(c); len(subs) > 0 {
		b.WriteString("\n## Commands\n\n")
		for _, sub := range subs {
			fmt.Fprintf(&b, "- [`%s`](%s.md): %s\n", sub.CommandPath(), mdFile(sub), mdEscape(sub.Short))
		}
	}
	groups := GroupedFlags(c.LocalFlags())
	for _, g := range groupTitles {
		flags := groups[g.group]
		if len(flags) == 0 {
			continue
		}
		fmt.Fprintf(&b, "\n## %s\n\n", g.title)
		if g.topic != "" {
			fmt.Fprintf(&b, "%s: see [idemctl](idemctl.md) (`idemctl help %s`).\n", mdFlagNames(flags), g.topic)
			continue
		}
		writeMarkdownFlags(&b, flags, EnvGroup(g.group))
	}
	if !c.HasParent() {
		bk.writeMarkdownRoot(&b)
	}
	if c.HasParent() {
		parent := c.Parent()
		fmt.Fprintf(&b, "\n## See also\n\n[`%s`](%s.md)\n", parent.CommandPath(), mdFile(parent))
	}
	return b.String()
}

// writeMarkdownRoot adds what only idemctl(1) holds: the shared flags, the
// environment, the files and the exit codes.
func (bk Book) writeMarkdownRoot(b *strings.Builder) {
	shared := GroupedFlags(bk.Shared)
	b.WriteString("\n## Connection flags\n\nTaken by every command that talks to Redis.\n\n")
	writeMarkdownFlags(b, shared[GroupConnection], true)
	b.WriteString("\n## Scan flags\n\nTaken by scan, stats, check, exporter and ui.\n\n")
	writeMarkdownFlags(b, shared[GroupScan], false)
	text, _ := bk.TopicText("environment")
	b.WriteString("\n## Environment\n\n```\n" + strings.TrimRight(text, "\n") + "\n```\n")
	b.WriteString("\n## Files\n\n" +
		"- `$XDG_CONFIG_HOME/idemctl/config.yaml`: the default config file (`~/.config/idemctl/config.yaml`)\n" +
		"- `$XDG_STATE_HOME/idemctl/audit.log`: the default audit log (`~/.local/state/idemctl/audit.log`)\n")
	b.WriteString("\n## Exit status\n\n| code | meaning |\n|---|---|\n")
	for _, e := range bk.ExitCodes {
		fmt.Fprintf(b, "| %d | %s |\n", e.Code, strings.ReplaceAll(mdEscape(e.Meaning), "|", `\|`))
	}
}

func writeMarkdownFlags(b *strings.Builder, flags []*pflag.Flag, withEnv bool) {
	for _, f := range flags {
		head := "--" + f.Name
		if f.Shorthand != "" {
			head = "-" + f.Shorthand + ", " + head
		}
		if v := flagValueName(f); v != "" {
			head += " " + v
		}
		fmt.Fprintf(b, "- `%s`: %s\n", head, mdEscape(flagUsage(f, withEnv)))
	}
}

func mdFlagNames(flags []*pflag.Flag) string {
	names := make([]string, len(flags))
	for i, f := range flags {
		names[i] = "`--" + f.Name + "`"
	}
	return strings.Join(names, " ")
}

// mdFile is a command's page name: its path with dashes.
func mdFile(c *cobra.Command) string { return strings.ReplaceAll(c.CommandPath(), " ", "-") }

// mdEscape keeps help text literal in Markdown: emphasis markers and angle
// brackets would otherwise be read as formatting or HTML.
var mdEscaper = strings.NewReplacer(`\`, `\\`, "*", `\*`, "_", `\_`, "<", "&lt;", ">", "&gt;")

func mdEscape(s string) string { return mdEscaper.Replace(s) }
