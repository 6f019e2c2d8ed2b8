package ui

import (
	"context"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/idemctl/idemctl/inspect"
)

// common is what the root hands every screen: the session, its keys and
// styles, and the terminal's size. One value shared by pointer, so a
// resize, a new colour scheme or a :profile switch reaches every screen
// at once and no screen reaches into the root for them.
type common struct {
	ctx    context.Context
	opts   Options
	keys   KeyMap
	styles Styles
	dark   bool

	width, height int // the terminal's

	status string // the status line: what the last key or result did

	// What the scans read: the records, their counts, and the counts over
	// time. The root fills them; the screens draw them.
	store *store
	stats *inspect.Stats
	trend
}

func (c *common) now() time.Time { return c.opts.Now() }

// canWrite reports whether this session may write; the policy does not
// change while the program runs.
func (c *common) canWrite() bool { return c.opts.Executor.CanWrite() }

// component is a screen or an overlay: its own state, keys and drawing.
// The root sizes it to the body before each use, since the banners above
// change the body's height as the data does.
type component interface {
	Update(msg tea.Msg) tea.Cmd
	View() string
	SetSize(width, height int)
}

// Every screen and overlay is a component.
var (
	_ component = (*helpScreen)(nil)
	_ component = (*commandLine)(nil)
	_ component = (*findBar)(nil)
	_ component = (*recordsScreen)(nil)
	_ component = (*overviewScreen)(nil)
	_ component = (*statsScreen)(nil)
	_ component = (*detailScreen)(nil)
	_ component = (*writesScreen)(nil)
	_ component = (*doctorScreen)(nil)
	_ component = (*streamsScreen)(nil)
	_ component = (*dialog)(nil)
)
