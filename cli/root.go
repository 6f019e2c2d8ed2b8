package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/idemctl/idemctl/actions/write"
	"github.com/idemctl/idemctl/cli/docgen"
)

// Command groups, in the order the root help lists them.
var commandGroups = []*cobra.Group{
	{ID: "inspect", Title: "Inspect:"},
	{ID: "write", Title: "Guarded writes:"},
	{ID: "setup", Title: "Set up and try:"},
}

// newRoot builds the command tree for one run: every command's flags are
// bound to that run's options, so nothing is shared between runs.
func newRoot(a *app) *cobra.Command {
	root := &cobra.Command{
		Use:           "idemctl",
		Short:         "inspect and repair Redis idempotency records",
		Args:          rootArgs,
		SilenceErrors: true,
		SilenceUsage:  true,
		RunE: func(c *cobra.Command, args []string) error {
			if v, _ := c.Flags().GetBool("version"); v {
				return runVersion(a, "text")
			}
			return pflag.ErrHelp // cobra prints the usage
		},
		PersistentPreRunE: func(c *cobra.Command, args []string) error {
			if err := a.setFlagsFromEnv(c.Flags()); err != nil {
				return err
			}
			return a.checkFlagRanges(c.Name(), c.Flags())
		},
		CompletionOptions: cobra.CompletionOptions{HiddenDefaultCmd: false},
	}
	root.SuggestionsMinimumDistance = 2
	root.Flags().BoolP("version", "v", false, "print the version (as 'idemctl version')")
	root.SetIn(a.stdin)
	root.SetOut(a.stdout)
	root.SetErr(a.stderr)
	setHelp(a, root)
	addCommands(a, root)
	setCompletion(root)
	return root
}

// setHelp makes flag errors usage errors and prints idemctl's own help.
func setHelp(a *app, root *cobra.Command) {
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		// idemctl sacn --stale: the unknown command comes first, not
		// the flag it does not have.
		if args := c.Flags().Args(); len(args) > 0 && c.HasAvailableSubCommands() {
			if aerr := c.ValidateArgs(args); aerr != nil {
				return aerr
			}
		}
		return usageErr("%v (see '%s --help')", err, c.CommandPath())
	})
	root.SetHelpFunc(func(c *cobra.Command, _ []string) {
		if c == root {
			book().RootHelp(a.stdout, root)
			return
		}
		docgen.CommandHelp(a.stdout, c)
	})
	root.SetUsageFunc(func(c *cobra.Command) error {
		docgen.CommandHelp(a.stdout, c)
		return nil
	})
}

// addCommands adds every command in its help group.
func addCommands(a *app, root *cobra.Command) {
	root.AddGroup(commandGroups...)
	add := func(group string, cmds ...*cobra.Command) {
		for _, c := range cmds {
			c.GroupID = group
			root.AddCommand(c)
		}
	}
	add("inspect", leaf(a, "ui", &uiCmd{}), leaf(a, "scan", &scanCmd{}), leaf(a, "stats", &statsCmd{}),
		leaf(a, "check", &checkCmd{}), leaf(a, "doctor", &doctorCmd{}), leaf(a, "detect", &detectCmd{}), leaf(a, "exporter", &exporterCmd{}))
	add("inspect", leaf(a, "find", &findCmd{}))
	add("inspect", leaf(a, "ledgers", &ledgersCmd{}))
	add("inspect", newStreamsCmd(a))
	for _, kind := range []write.Kind{write.KindExpire, write.KindFail, write.KindReconcile} {
		c := leaf(a, string(kind), &actionCmd{kind: kind})
		c.Args = cobra.ArbitraryArgs
		add("write", c)
	}
	triage := leaf(a, "triage", &triageCmd{})
	triage.Args = cobra.ArbitraryArgs
	undo := leaf(a, "undo", &undoCmd{})
	undo.Args = cobra.ArbitraryArgs
	add("write", triage, undo, newAuditCmd(a))
	add("setup", leaf(a, "demo", &demoCmd{}), leaf(a, "seed", &seedCmd{}), leaf(a, "presets", &printCmd{print: runPresets}),
		newConfigCmd(a), leaf(a, "version", &printCmd{print: runVersion}))
	add("write", leaf(a, "reap", &reapCmd{}))
	root.SetHelpCommand(newHelpCmd(a))
	root.SetHelpCommandGroupID("setup")
	root.SetCompletionCommandGroupID("setup")
	man := leaf(a, "man", &manCmd{root: root})
	man.Args = cobra.MaximumNArgs(1)
	add("setup", man)
}

// setCompletion names the completion command's shells and makes a wrong
// shell a usage error.
func setCompletion(root *cobra.Command) {
	root.InitDefaultCompletionCmd()
	for _, c := range root.Commands() {
		if c.Name() == "completion" {
			c.Short = "shell completion script: bash, zsh, fish or powershell"
			c.Args = func(_ *cobra.Command, args []string) error {
				if len(args) > 0 {
					return usageErr("completion %q: want bash, zsh, fish or powershell", args[0])
				}
				return nil
			}
			c.RunE = func(*cobra.Command, []string) error { return pflag.ErrHelp }
		}
	}
}

// rootArgs rejects an unknown command as a usage error with a suggestion.
func rootArgs(c *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	return unknownCommand(c, args[0])
}

// unknownCommand names a command c does not have, with the ones it may
// have meant.
func unknownCommand(c *cobra.Command, name string) error {
	see := "idemctl help"
	if c.HasParent() {
		see = c.CommandPath() + " --help"
	}
	what := fmt.Sprintf("unknown command %q", name)
	if s := docgen.Suggest(c, name); len(s) > 0 {
		return usageErr("%s: did you mean %s? (see '%s')", what, strings.Join(s, " or "), see)
	}
	return usageErr("%s (see '%s')", what, see)
}

// command is one leaf command's options (as gh's XOptions): flags binds
// each flag to a field, and run runs the command with those fields alone,
// never the flag set.
type command interface {
	flags(fs *pflag.FlagSet)
	run(ctx context.Context, a *app, args []string) error
}

// flagResolver is a command whose options also say which flags were given
// (on the command line or as IDEMCTL_…): a flag given wins over the
// profile, a default does not. resolveFlags records that, once, after
// parsing and before run; it checks nothing, so every error comes from run
// in the order it always did.
type flagResolver interface {
	resolveFlags(fs *pflag.FlagSet)
}

// printCmd is a command that only prints, as text or JSON: presets, version.
type printCmd struct {
	output string
	print  func(a *app, output string) error
}

func (o *printCmd) flags(fs *pflag.FlagSet) {
	outputFlag(fs, &o.output, "text", "text or json", "text", "json")
}

func (o *printCmd) run(_ context.Context, a *app, _ []string) error {
	return o.print(a, o.output)
}

// leaf builds the command NAME for cmd. Its usage line, summary and
// description come from docs/NAME.txt: the help, the man pages and the
// completions' descriptions are prose, edited as prose. Commands take no
// arguments unless they set Args themselves.
func leaf(a *app, name string, cmd command) *cobra.Command {
	use, short, long := commandDoc(name)
	c := &cobra.Command{
		Use: use, Short: short, Long: long, Args: noArgs,
		RunE: func(c *cobra.Command, args []string) error {
			if r, ok := cmd.(flagResolver); ok {
				r.resolveFlags(c.Flags())
			}
			if a.runF != nil {
				return a.runF(cmd, args)
			}
			return cmd.run(c.Context(), a, args)
		},
	}
	c.Flags().SortFlags = false
	cmd.flags(c.Flags())
	return c
}

func noArgs(c *cobra.Command, args []string) error {
	if len(args) > 0 && c.HasAvailableSubCommands() {
		return unknownCommand(c, args[0])
	}
	if len(args) > 0 {
		return usageErr("unexpected argument %q (see '%s --help')", args[0], c.CommandPath())
	}
	return nil
}

// outputFlag is -o/--output with the formats it accepts (completed by the
// shell). The first format is the default on a terminal, the last otherwise,
// unless def is given.
func outputFlag(fs *pflag.FlagSet, p *string, def, usage string, formats ...string) {
	fs.StringVarP(p, "output", "o", def, usage)
	docgen.SetAnnotation(fs.Lookup("output"), formatsAnnotation, formats...)
}

const formatsAnnotation = "idemctl_formats"

// helpTopics explain what many commands share, once.
var helpTopics = []docgen.Topic{
	{Name: "connection", Short: "connection flags: URL, credentials, TLS, cluster and Sentinel, config file and profile"},
	{Name: "scanning", Short: "scan flags: how hard a scan works the server"},
	{Name: "environment", Short: "IDEMCTL_… and other environment variables"},
}

func newHelpCmd(a *app) *cobra.Command {
	c := &cobra.Command{
		Use:   "help [COMMAND|TOPIC]",
		Short: "help for a command or a topic (connection, scanning, environment)",
		Args:  cobra.ArbitraryArgs,
		RunE: func(c *cobra.Command, args []string) error {
			root := c.Root()
			if len(args) == 0 {
				book().RootHelp(a.stdout, root)
				return nil
			}
			if book().WriteTopic(a.stdout, args[0]) {
				return nil
			}
			cmd, rest, err := root.Find(args)
			if err != nil || cmd == root || len(rest) > 0 {
				return usageErr("no help for %q: not a command or a topic (see 'idemctl help')", strings.Join(args, " "))
			}
			docgen.CommandHelp(a.stdout, cmd)
			return nil
		},
		ValidArgsFunction: func(c *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
			if len(args) > 0 {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			var out []cobra.Completion
			for _, sub := range c.Root().Commands() {
				if sub.IsAvailableCommand() {
					out = append(out, cobra.CompletionWithDesc(sub.Name(), sub.Short))
				}
			}
			for _, t := range helpTopics {
				out = append(out, cobra.CompletionWithDesc(t.Name, t.Short))
			}
			return out, cobra.ShellCompDirectiveNoFileComp
		},
	}
	return c
}

// book is what the help, man and Markdown pages take beside the command
// tree (cli/docgen draws them).
func book() docgen.Book {
	return docgen.Book{Version: version, Shared: sharedFlags(), ExitCodes: ExitCodeTable, Topics: helpTopics}
}
