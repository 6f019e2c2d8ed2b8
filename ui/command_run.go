package ui

import (
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/idemctl/idemctl/actions/write"
	"github.com/idemctl/idemctl/inspect"
)

// onCommandKey routes a key to the command line, and runs the line enter
// closed it on: a command goes to the screen it names.
func (m *Model) onCommandKey(msg tea.KeyPressMsg) tea.Cmd {
	cmd := m.route(m.cmdLine, msg)
	if line, ok := m.cmdLine.take(); ok {
		return m.runCommand(line)
	}
	return cmd
}

func (m *Model) runCommand(line string) tea.Cmd {
	name, arg, _ := strings.Cut(line, " ")
	arg = strings.TrimSpace(arg)
	switch name {
	case "":
		return nil
	case "q", "quit":
		m.shutdown()
		return tea.Quit
	case "export":
		if arg == "" {
			m.status = ":export needs a file name, e.g. :export stale.ndjson or :export stale.csv"
			return nil
		}
		return m.export(arg)
	case "fail", "expire", "reconcile":
		m.screen = screenRecords
		return m.openDialog(write.Kind(name))
	case "keyspace", "ks":
		if what, ok := m.src.keyspace(m.common, arg); ok {
			return m.restart(what)
		}
		return nil
	case "db":
		if what, ok := m.src.db(m.common, arg); ok {
			m.resize(m.width, m.height) // the header's address changed
			return m.restart(what)
		}
		return nil
	case "profile":
		return m.switchProfile(arg)
	case "streams":
		cmd := m.streams.Open(m.screen)
		m.screen = screenStreams
		return cmd
	case "doctor":
		m.doctor.Open(m.screen)
		m.screen = screenDoctor
		return nil
	case "group":
		if arg != "" && !containsName(m.captureNames(), arg) {
			m.status = fmt.Sprintf(":group %s: no such capture (these keyspaces have: %s)", inspect.Sanitize(arg), strings.Join(m.captureNames(), ", "))
			return nil
		}
		m.screen = screenRecords
		m.store.setGrouping(arg)
		m.records.groupCursor, m.records.groupOffset = 0, 0
		return nil
	}
	m.status = fmt.Sprintf("unknown command %q: %s", inspect.Sanitize(name), commandHelp)
	return nil
}

func containsName(names []string, n string) bool {
	for _, x := range names {
		if x == n {
			return true
		}
	}
	return false
}
