package cli

import (
	"io/fs"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// Every command built with newCommand has its docs/NAME.txt, and every
// file there belongs to a command.
func TestEveryCommandIsDocumented(t *testing.T) {
	root := newRoot(newApp(IO{}))
	used := map[string]bool{}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			walk(sub)
		}
		if c == root || c.Name() == "help" || c.Name() == "completion" || c.Parent().Name() == "completion" {
			return
		}
		name := c.Name()
		if c.Parent() != root {
			name = c.Parent().Name() + "-" + name
		}
		if _, err := commandDocs.ReadFile("docs/" + name + ".txt"); err != nil && c.HasSubCommands() {
			return // a group (config): its subcommands are documented
		}
		used[name] = true
		if c.Short == "" || (c.Long == "" && !c.Hidden) || !strings.HasPrefix(c.Use, c.Name()) {
			t.Errorf("%s: docs/%s.txt missing or incomplete (use %q, short %q)", c.CommandPath(), name, c.Use, c.Short)
		}
	}
	walk(root)
	files, err := fs.Glob(commandDocs, "docs/*.txt")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if name := strings.TrimSuffix(strings.TrimPrefix(f, "docs/"), ".txt"); !used[name] {
			t.Errorf("%s describes no command", f)
		}
	}
}
