package cli

import (
	"sort"

	"github.com/spf13/cobra"

	"github.com/idemctl/idemctl/config"
	"github.com/idemctl/idemctl/inspect"
)

// registerCompletions (only for the shell's __complete requests: cobra
// keeps every registration for the life of the process) teaches the shell the values of the flags that name
// things: profiles, keyspaces and schemas from the config file in effect
// (--config, $IDEMCTL_CONFIG or the default), presets, states, flags and
// each command's output formats.
func (a *app) registerCompletions(c *cobra.Command) {
	for _, sub := range c.Commands() {
		a.registerCompletions(sub)
	}
	fs := c.Flags()
	on := func(name string, f cobra.CompletionFunc) {
		if fs.Lookup(name) != nil {
			_ = c.RegisterFlagCompletionFunc(name, f)
		}
	}
	on("profile", a.completeFromConfig(func(cfg *config.Config) []string { return cfg.ProfileNames() }))
	on("keyspace", a.completeFromConfig(func(cfg *config.Config) []string {
		var out []string
		for _, k := range cfg.Keyspaces {
			out = append(out, k.Name)
		}
		return out
	}))
	on("schema", a.completeFromConfig(func(cfg *config.Config) []string {
		var out []string
		for n := range cfg.Schemas {
			out = append(out, n)
		}
		sort.Strings(out)
		return out
	}))
	on("config", func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return []cobra.Completion{"yaml", "yml"}, cobra.ShellCompDirectiveFilterFileExt
	})
	presets := func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
		var out []cobra.Completion
		for _, n := range inspect.PresetNames() {
			s, _ := inspect.Preset(n)
			out = append(out, cobra.CompletionWithDesc(n, s.Description))
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
	if c.Name() != "seed" { // seed writes only the formats it can generate
		on("preset", presets)
	} else {
		on("preset", cobra.FixedCompletions([]cobra.Completion{"atlasmart", "setnx"}, cobra.ShellCompDirectiveNoFileComp))
	}
	var states []cobra.Completion
	for _, s := range inspect.AllStates() {
		states = append(states, s.String())
	}
	on("state", cobra.FixedCompletions(states, cobra.ShellCompDirectiveNoFileComp))
	var flags []cobra.Completion
	for _, f := range inspect.AllFlags() {
		flags = append(flags, cobra.CompletionWithDesc(f.Name, f.Explain))
	}
	on("flag", cobra.FixedCompletions(flags, cobra.ShellCompDirectiveNoFileComp))
	if f := fs.Lookup("output"); f != nil {
		on("output", cobra.FixedCompletions(f.Annotations[formatsAnnotation], cobra.ShellCompDirectiveNoFileComp))
	}
}

// completeFromConfig completes from the config file the command line in
// progress would use; a missing or broken file completes nothing.
func (a *app) completeFromConfig(names func(*config.Config) []string) cobra.CompletionFunc {
	return func(c *cobra.Command, _ []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
		path, _ := c.Flags().GetString("config")
		cfg, err := a.loadConfig(path)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return names(cfg), cobra.ShellCompDirectiveNoFileComp
	}
}
