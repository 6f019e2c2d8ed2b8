package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// docs/commands.md promises -o text to every command that prints: where
// the human form is a table, text names it too. config view prints YAML,
// and the doc says so.
func TestEveryPrintingCommandTakesOutputText(t *testing.T) {
	home := t.TempDir()
	env := map[string]string{"HOME": home, "XDG_CONFIG_HOME": filepath.Join(home, ".config"), "XDG_STATE_HOME": filepath.Join(home, ".state")}
	root := newRoot(newApp(IO{}))
	var walk func(c *cobra.Command)
	checked := 0
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			walk(sub)
		}
		f := c.LocalFlags().Lookup("output")
		if f == nil || c.CommandPath() == "idemctl config view" {
			return
		}
		formats := f.Annotations[formatsAnnotation]
		if !slices.Contains(formats, "text") && !strings.Contains(f.Usage, "text") {
			t.Errorf("%s: -o says %q: it does not name text", c.CommandPath(), f.Usage)
		}
		args := append(strings.Fields(c.CommandPath())[1:], "-o", "text")
		if c.LocalFlags().Lookup("url") != nil {
			args = append(args, "--url", "redis://127.0.0.1:1/0", "--preset", "atlasmart", "--match", "x")
		}
		var out, errb bytes.Buffer
		Run(context.Background(), IO{Stdout: &out, Stderr: &errb, Getenv: func(k string) string { return env[k] }}, args)
		if strings.Contains(errb.String(), "--output") {
			t.Errorf("idemctl %s: %s", strings.Join(args, " "), errb.String())
		}
		checked++
	}
	walk(root)
	if checked < 10 {
		t.Fatalf("only %d commands print: the walk missed them", checked)
	}
	doc, err := os.ReadFile("../docs/commands.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(doc), "Every command that prints takes `-o`/`--output`: `text`") {
		t.Errorf("docs/commands.md no longer says what -o takes")
	}
}
