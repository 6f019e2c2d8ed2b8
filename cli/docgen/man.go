package docgen

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// ManPathAdvice says whether man(1) will find pages under manDir (…/man):
// through MANPATH, or as man-db derives it from PATH (a PATH entry D/bin
// brings D/share/man); otherwise the line that makes it.
func ManPathAdvice(getenv func(string) string, manDir string) string {
	if mp := getenv("MANPATH"); mp != "" {
		for _, d := range filepath.SplitList(mp) {
			if filepath.Clean(d) == manDir {
				return "'man idemctl' finds them: MANPATH holds " + manDir
			}
		}
		return "'man idemctl' needs them on MANPATH: export MANPATH=\"" + manDir + ":$MANPATH\""
	}
	bin := filepath.Join(filepath.Dir(filepath.Dir(manDir)), "bin")
	for _, d := range filepath.SplitList(getenv("PATH")) {
		if filepath.Clean(d) == bin {
			return "'man idemctl' finds them: " + bin + " is on PATH, so man looks in " + manDir
		}
	}
	return "'man idemctl' finds them once " + manDir + " is on MANPATH: export MANPATH=\"" + manDir + ":\" (the trailing : keeps the system's pages)"
}

// WritePages renders every available command (and help) under root into
// dir, one file per command named by its path (idemctl-config-view.1).
func WritePages(ctx context.Context, root *cobra.Command, dir string, render func(*cobra.Command) string, ext string) (int, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return 0, fmt.Errorf("man pages: %w", err)
	}
	n := 0
	var walk func(c *cobra.Command) error
	walk = func(c *cobra.Command) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		name := strings.ReplaceAll(c.CommandPath(), " ", "-")
		if err := os.WriteFile(filepath.Join(dir, name+ext), []byte(render(c)), 0o644); err != nil {
			return fmt.Errorf("man pages: %w", err)
		}
		n++
		for _, sub := range c.Commands() {
			if sub.IsAvailableCommand() || sub.Name() == "help" {
				if err := walk(sub); err != nil {
					return err
				}
			}
		}
		return nil
	}
	return n, walk(root)
}

// ManPage renders one command as roff (man(7)).
func (bk Book) ManPage(c *cobra.Command) string {
	var b strings.Builder
	title := strings.ToUpper(strings.ReplaceAll(c.CommandPath(), " ", "-"))
	fmt.Fprintf(&b, ".TH %s 1 \"\" \"idemctl %s\" \"idemctl manual\"\n", title, roffEscape(bk.Version))
	fmt.Fprintf(&b, ".SH NAME\n%s \\- %s\n", roffEscape(strings.ReplaceAll(c.CommandPath(), " ", "-")), roffEscape(c.Short))
	fmt.Fprintf(&b, ".SH SYNOPSIS\n.B %s\n", roffEscape(c.UseLine()))
	if !c.HasParent() {
		b.WriteString(".SH DESCRIPTION\nA terminal UI for on-call triage and scriptable commands with JSON output, " +
			"for idempotency records kept in Redis. Reads go through one scanner; writes are guarded " +
			"compare-and-set scripts, confirmed and audited.\n")
	} else if about := strings.TrimSpace(c.Long); about != "" {
		b.WriteString(".SH DESCRIPTION\n" + roffParagraphs(about))
	}
	if subs := availableCommands(c); len(subs) > 0 {
		b.WriteString(".SH COMMANDS\n")
		for _, sub := range subs {
			fmt.Fprintf(&b, ".TP\n.B %s\n%s\n", roffEscape(sub.Name()), roffEscape(sub.Short))
		}
	}
	groups := GroupedFlags(c.LocalFlags())
	for _, g := range groupTitles {
		flags := groups[g.group]
		if len(flags) == 0 {
			continue
		}
		fmt.Fprintf(&b, ".SH %s\n", strings.ToUpper(g.title))
		if g.topic != "" {
			fmt.Fprintf(&b, "%s\n.PP\nSee\n.BR idemctl (1).\n", roffEscape(strings.TrimSpace(flagNames(flags))))
			continue
		}
		writeManFlags(&b, flags, EnvGroup(g.group))
	}
	if !c.HasParent() {
		shared := GroupedFlags(bk.Shared)
		b.WriteString(".SH CONNECTION FLAGS\nTaken by every command that talks to Redis.\n")
		writeManFlags(&b, shared[GroupConnection], true)
		b.WriteString(".SH SCAN FLAGS\nTaken by scan, stats, check, exporter and ui.\n")
		writeManFlags(&b, shared[GroupScan], false)
		text, _ := bk.TopicText("environment")
		b.WriteString(".SH ENVIRONMENT\n.nf\n" + roffEscape(text) + ".fi\n")
		b.WriteString(".SH FILES\n.TP\n$XDG_CONFIG_HOME/idemctl/config.yaml\nthe default config file (~/.config/idemctl/config.yaml)\n" +
			".TP\n$XDG_STATE_HOME/idemctl/audit.log\nthe default audit log (~/.local/state/idemctl/audit.log)\n")
		b.WriteString(".SH EXIT STATUS\n")
		for _, e := range bk.ExitCodes {
			fmt.Fprintf(&b, ".TP\n.B %d\n%s\n", e.Code, roffEscape(e.Meaning))
		}
	}
	b.WriteString(".SH SEE ALSO\n")
	if c.HasParent() {
		b.WriteString(".BR idemctl (1)\n")
	} else {
		var refs []string
		for _, sub := range availableCommands(c) {
			refs = append(refs, ".BR idemctl-"+roffEscape(sub.Name())+" (1)")
		}
		b.WriteString(strings.Join(refs, " ,\n") + "\n")
	}
	return b.String()
}

func availableCommands(c *cobra.Command) []*cobra.Command {
	var out []*cobra.Command
	for _, sub := range c.Commands() {
		if sub.IsAvailableCommand() {
			out = append(out, sub)
		}
	}
	return out
}

func writeManFlags(b *strings.Builder, flags []*pflag.Flag, withEnv bool) {
	for _, f := range flags {
		head := `\fB\-\-` + roffEscape(f.Name) + `\fR`
		if f.Shorthand != "" {
			head = `\fB\-` + roffEscape(f.Shorthand) + `\fR, ` + head
		}
		if v := flagValueName(f); v != "" {
			head += ` \fI` + roffEscape(v) + `\fR`
		}
		fmt.Fprintf(b, ".TP\n%s\n%s\n", head, roffEscape(flagUsage(f, withEnv)))
	}
}

// roffParagraphs keeps the help text's blank-line paragraphs.
func roffParagraphs(s string) string {
	var b strings.Builder
	for i, p := range strings.Split(s, "\n\n") {
		if i > 0 {
			b.WriteString(".PP\n")
		}
		b.WriteString(roffEscape(strings.Join(strings.Fields(p), " ")) + "\n")
	}
	return b.String()
}

// roffEscape makes text safe for roff, and shows `inline code` (as the
// help and the README write it) in bold rather than with its backticks.: backslashes, minus signs, non-ASCII
// characters and lines that would start with a control character.
func roffEscape(s string) string {
	s = strings.ReplaceAll(s, `\`, `\e`)
	s = strings.ReplaceAll(s, "-", `\-`)
	var b strings.Builder
	for _, r := range s {
		if r > 0x7e {
			fmt.Fprintf(&b, `\[u%04X]`, r) // plain troff reads ASCII only
			continue
		}
		b.WriteRune(r)
	}
	lines := strings.Split(roffCode(b.String()), "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, ".") || strings.HasPrefix(l, "'") {
			lines[i] = `\&` + l
		}
	}
	return strings.Join(lines, "\n")
}

// roffCode turns each pair of backticks into bold: `seed` → \fBseed\fR.
// A backtick without its pair is left as the grave accent it is.
func roffCode(s string) string {
	if strings.Count(s, "`") < 2 {
		return s
	}
	var b strings.Builder
	for {
		open := strings.IndexByte(s, '`')
		if open < 0 {
			break
		}
		end := strings.IndexByte(s[open+1:], '`')
		if end < 0 {
			break
		}
		b.WriteString(s[:open] + `\fB` + s[open+1:open+1+end] + `\fR`)
		s = s[open+1+end+1:]
	}
	b.WriteString(s)
	return b.String()
}
