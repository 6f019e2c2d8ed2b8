package ui

import (
	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/ui/common"
	"github.com/idemctl/idemctl/ui/streams"
)

// Options is what the TUI needs from main (ui/common holds it, so the
// screens' subpackages read the same session).
type Options = common.Options

// shared is what the root hands the screens of this package: the Common
// every screen shares (session, keys, styles, size, status), and what the
// scans read — the records, their counts, and the counts over time. The
// root fills them; the screens draw them.
type shared struct {
	*common.Common
	store *store
	stats *inspect.Stats
	trend
}

// Every screen and overlay is a component.
var (
	_ common.Component = (*helpScreen)(nil)
	_ common.Component = (*commandLine)(nil)
	_ common.Component = (*findBar)(nil)
	_ common.Component = (*recordsScreen)(nil)
	_ common.Component = (*overviewScreen)(nil)
	_ common.Component = (*statsScreen)(nil)
	_ common.Component = (*detailScreen)(nil)
	_ common.Component = (*writesScreen)(nil)
	_ common.Component = (*doctorScreen)(nil)
	_ common.Component = (*streams.Screen)(nil)
	_ common.Component = (*dialog)(nil)
)
