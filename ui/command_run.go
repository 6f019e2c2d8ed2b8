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
			m.Status = ":export needs a file name, e.g. :export stale.ndjson or :export stale.csv"
			return nil
		}
		return m.export(arg)
	case "fail", "expire", "reconcile":
		m.screen = screenRecords
		return m.openDialog(write.Kind(name))
	case "keyspace", "ks":
		if what, ok := m.src.keyspace(m.shared, arg); ok {
			return m.restart(what)
		}
		return nil
	case "db":
		if what, ok := m.src.db(m.shared, arg); ok {
			m.resize(m.Width, m.Height) // the header's address changed
			return m.restart(what)
		}
		return nil
	case "find":
		return m.finder.Start(arg)
	case "profile":
		return m.switchProfile(arg)
	case "streams":
		if m.screen != screenStreams {
			m.streamsFrom = m.screen
		}
		cmd := m.streams.Open()
		m.screen = screenStreams
		return cmd
	case "doctor":
		m.doctor.Open(m.screen)
		m.screen = screenDoctor
		return nil
	case "group":
		if arg != "" && !containsName(m.captureNames(), arg) {
			m.Status = fmt.Sprintf(":group %s: no such capture (these keyspaces have: %s)", inspect.Sanitize(arg), strings.Join(m.captureNames(), ", "))
			return nil
		}
		m.screen = screenRecords
		m.records.groupBy(arg)
		return nil
	}
	m.Status = fmt.Sprintf("unknown command %q: %s", inspect.Sanitize(name), commandHelp)
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
