package ui

import (
	"strings"

	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"

	"github.com/idemctl/idemctl/ui/common"
)

// The command line (:) runs what has no key of its own:
//
//	:export FILE   the filtered view to FILE: CSV when it ends in .csv, else NDJSON
//	               (the same objects as 'idemctl scan --output ndjson')
//	:fail :expire :reconcile   the write dialog on the marked records (or the cursor's)
//	:group NAME    group Records by a capture (:group alone: ungroup)
//	:keyspace NAME scan only that configured keyspace (:keyspace all: every one)
//	:db N          read database N of the same server (read-only sessions)
//	:streams       the consumer groups of the stream keyspaces
//	:find KEY|FILE a request's record, keyed as its library keys it (find_record.go)
//	:q             quit
const commandHelp = "find KEY|FILE · export FILE(.csv|.ndjson) · fail · expire · reconcile · group [NAME] · keyspace NAME|all · db N · profile NAME · doctor · streams · q"

// commandLine is the command line's input, drawn in the status line
// while open. What it runs is the root's: a command switches screens.
type commandLine struct {
	*shared
	input   textinput.Model
	open    bool
	entered *string // the line enter ran, until the root takes it
	w       int
}

func newCommandLine(c *shared) *commandLine {
	return &commandLine{shared: c, input: common.NewLine(":", commandHelp, 1024)}
}

// Open shows an empty line with the cursor in it.
func (c *commandLine) Open() tea.Cmd {
	c.open = true
	return common.OpenLine(&c.input, max(c.Width-4, 10))
}

func (c *commandLine) SetSize(width, _ int) { c.w = width }

// Update edits the line; enter closes it and keeps the line for take,
// esc abandons it.
func (c *commandLine) Update(msg tea.Msg) tea.Cmd {
	if k, ok := msg.(tea.KeyPressMsg); ok && (k.String() == "esc" || k.String() == "enter") {
		c.open = false
		c.input.Blur()
		if k.String() == "enter" {
			line := strings.TrimSpace(c.input.Value())
			c.entered = &line
		}
		return nil
	}
	var cmd tea.Cmd
	c.input, cmd = c.input.Update(msg)
	return cmd
}

// take is the line enter ran, once.
func (c *commandLine) take() (string, bool) {
	if c.entered == nil {
		return "", false
	}
	line := *c.entered
	c.entered = nil
	return line, true
}

// View is the status line while the line is open.
func (c *commandLine) View() string { return common.Fit(c.input.View(), c.w) }

// footer is the help line while the line is open.
func (c *commandLine) footer() string {
	return c.Styles.HelpLine.Render(common.Fit("esc closes · "+commandHelp, c.Width))
}
