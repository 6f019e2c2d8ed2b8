package ui

import (
	"context"
	"fmt"
	"maps"
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/idemctl/idemctl/actions"
	"github.com/idemctl/idemctl/actions/write"
	"github.com/idemctl/idemctl/inspect"
	snapfile "github.com/idemctl/idemctl/inspect/snapshot"
	"github.com/idemctl/idemctl/ui/common"
)

// selection is what y and Y act on in the table: the marked records,
// else the one under the cursor (on the Detail screen, its record).
func (rs *recordsScreen) selection() []inspect.Record {
	if recs := rs.markedRecords(); len(recs) > 0 {
		return recs
	}
	if r := rs.store.at(rs.cursor); r != nil && !rs.grouped() {
		return []inspect.Record{*r}
	}
	return nil
}

// copyText puts text on the terminal's clipboard (OSC 52, which the
// terminal receives base64-encoded) and says what was copied. Text with
// control bytes from Redis is refused: pasted into a shell it could run
// something.
func (c *shared) copyText(what, text string) tea.Cmd {
	if inspect.Sanitize(text) != text {
		c.Status = what + " not copied: the key holds control or invalid bytes that would not paste safely"
		return nil
	}
	head := "copied " + what + " (OSC 52): "
	c.Status = head + strings.TrimRight(common.FitMiddle(text, max(c.Width-ansi.StringWidth(head), 12)), " ")
	return tea.SetClipboard(text)
}

// copyKey copies the key of the first of sel (y).
func (c *shared) copyKey(sel []inspect.Record) tea.Cmd {
	if len(sel) == 0 {
		return nil
	}
	return c.copyText("the key", sel[0].Key)
}

// copyCommand copies the CLI command for sel (Y): the guarded
// write its state calls for, pinned to the state and fingerprint shown and
// with --dry-run, so pasting it shows the change before anything is
// written.
func (c *shared) copyCommand(sel []inspect.Record) tea.Cmd {
	if len(sel) == 0 {
		return nil
	}
	if src, ok := c.Opts.Scan.Snapshot.(*snapfile.Source); ok {
		c.Status = fmt.Sprintf("pinning %d records to the snapshot (one more pass over the file)…", len(sel))
		return pinSnapshot(c.Ctx, src, sel, c.Opts.Profile)
	}
	return c.copyText("the command", c.cliCommand(sel))
}

// pinnedMsg brings --from-file lines pinned to the snapshot's records.
type pinnedMsg struct {
	text   string
	pinned int
	err    error
}

// pinSnapshot reads the selection's versions from the file and writes the
// command that applies them to the live server, lines in a here-document.
func pinSnapshot(ctx context.Context, src *snapfile.Source, sel []inspect.Record, profile string) tea.Cmd {
	return func() tea.Msg {
		byKS := map[*inspect.Keyspace][]string{}
		for _, r := range sel {
			byKS[r.Keyspace] = append(byKS[r.Keyspace], r.Key)
		}
		versions := map[string]inspect.RecordVersion{}
		for ks, keys := range byKS {
			vs, err := snapfile.Pin(ctx, src, ks, keys)
			if err != nil {
				return pinnedMsg{err: err}
			}
			maps.Copy(versions, vs)
		}
		var b strings.Builder
		action := "fail"
		if sel[0].State != inspect.StateProcessing {
			action = "expire --ttl 10m"
		}
		b.WriteString("idemctl " + action)
		if profile != "" {
			b.WriteString(" --profile " + shellWord(profile))
		}
		b.WriteString(" --write --reason 'TODO: why' --dry-run --from-file - <<'EOF'\n")
		n := 0
		for _, r := range sel {
			v, ok := versions[r.Key]
			if !ok || v.Err != "" {
				continue // gone at the snapshot's time, or not pinnable: left out
			}
			short := write.Version{Type: v.Type, Content: v.Content, Expiry: v.Expiry, Companion: v.Companion}.Short()
			b.WriteString(actions.TargetLine(r.Key, r.RawState, r.Fingerprint, short) + "\n")
			n++
		}
		b.WriteString("EOF\n")
		return pinnedMsg{text: b.String(), pinned: n}
	}
}

func (c *shared) onPinned(msg pinnedMsg) tea.Cmd {
	if msg.err != nil {
		c.Status = "not copied: " + inspect.Line(msg.err.Error())
		return nil
	}
	// Every column is plain printable text or base64 (actions.TargetLine):
	// the lines paste safely into a shell.
	c.Status = fmt.Sprintf("copied (OSC 52) a command with %d --from-file lines pinned to the snapshot: paste it where the live server is reachable; --dry-run shows what it would write", msg.pinned)
	return tea.SetClipboard(msg.text)
}

func (c *shared) cliCommand(sel []inspect.Record) string {
	action := "fail"
	if sel[0].State != inspect.StateProcessing {
		action = "expire --ttl 10m"
	}
	var b strings.Builder
	b.WriteString("idemctl " + action)
	if p := c.Opts.Profile; p != "" && !c.Opts.Demo {
		b.WriteString(" --profile " + shellWord(p))
	}
	for _, r := range sel {
		b.WriteString(" " + shellWord(r.Key))
	}
	if len(sel) == 1 {
		if sel[0].RawState != "" {
			b.WriteString(" --expect-state " + shellWord(sel[0].RawState))
		}
		if sel[0].Fingerprint != "" {
			b.WriteString(" --expect-fingerprint " + shellWord(sel[0].Fingerprint))
		}
	}
	b.WriteString(" --reason 'TODO: why' --dry-run")
	return b.String()
}

// shellWord quotes s for a POSIX shell.
func shellWord(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
