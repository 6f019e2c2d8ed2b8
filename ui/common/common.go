// Package common is what every screen of the terminal UI is handed: the
// session, its keys and styles, the terminal's size and the status line
// (one Common, shared by pointer), the Component interface every screen
// implements, and the drawing helpers the screens share. ui/ and the
// screens' subpackages (ui/streams) import it; it imports neither.
//
// Floor 4 of ARCHITECTURE.md, with ui/: it may import floors 0–3, never
// the command layer or another package of ui/.
package common

import (
	"context"
	"time"

	tea "charm.land/bubbletea/v2"
)

// Common is what the root hands every screen: the session, its keys and
// styles, and the terminal's size. One value shared by pointer, so a
// resize, a new colour scheme or a :profile switch reaches every screen
// at once and no screen reaches into the root for them.
type Common struct {
	Ctx    context.Context
	Opts   Options
	Keys   KeyMap
	Styles Styles
	Dark   bool

	Width, Height int // the terminal's

	Status string // the status line: what the last key or result did
}

// Now is the session's clock (tests fix it).
func (c *Common) Now() time.Time { return c.Opts.Now() }

// CanWrite reports whether this session may write; the policy does not
// change while the program runs.
func (c *Common) CanWrite() bool { return c.Opts.Executor.CanWrite() }

// Component is a screen or an overlay: its own state, keys and drawing.
// The root sizes it to the body before each use, since the banners above
// change the body's height as the data does.
type Component interface {
	Update(msg tea.Msg) tea.Cmd
	View() string
	SetSize(width, height int)
}
