package cli

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/idemctl/idemctl/cli/docgen"
)

// manCmd writes the man pages of the whole tree under root: idemctl(1)
// with the shared flags, the environment and the exit codes, and one page
// per command, all from the same definitions as --help; with --markdown,
// the same pages as Markdown (docs/commands). --install puts the man pages
// where man(1) looks for a user's own: packagers give the directory.
type manCmd struct {
	root     *cobra.Command
	markdown bool
	install  bool
}

func (o *manCmd) flags(fs *pflag.FlagSet) {
	fs.BoolVar(&o.install, "install", false, "write the man pages into $XDG_DATA_HOME/man/man1 (~/.local/share/man/man1), where 'man idemctl' finds them")
	fs.BoolVar(&o.markdown, "markdown", false, "write Markdown pages (docs/commands) instead of man pages")
}

func (o *manCmd) run(ctx context.Context, a *app, args []string) error {
	switch {
	case o.install && (len(args) > 0 || o.markdown):
		return usageErr("--install writes the man pages to their own place: give no DIR and no --markdown")
	case !o.install && len(args) != 1:
		return usageErr("give the directory to write the pages into, or --install (see 'idemctl man --help')")
	}
	render, ext, what := book().ManPage, ".1", "man pages"
	if o.markdown {
		render, ext, what = book().MarkdownPage, ".md", "Markdown pages"
	}
	dir := ""
	if o.install {
		data := a.getenv("XDG_DATA_HOME")
		if data == "" {
			home := a.getenv("HOME")
			if home == "" {
				return usageErr("--install: neither XDG_DATA_HOME nor HOME is set: give the directory instead (idemctl man DIR)")
			}
			data = filepath.Join(home, ".local", "share")
		}
		dir = filepath.Join(data, "man", "man1")
	} else {
		dir = args[0]
	}
	n, err := docgen.WritePages(ctx, o.root, dir, render, ext)
	if err != nil {
		return err
	}
	fmt.Fprintf(a.stderr, "wrote %d %s to %s\n", n, what, dir)
	if o.install {
		fmt.Fprintln(a.stderr, docgen.ManPathAdvice(a.getenv, filepath.Dir(dir)))
	}
	return nil
}
