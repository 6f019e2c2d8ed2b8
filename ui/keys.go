package ui

import (
	"slices"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
)

// KeyMap holds every binding; one value per model, never a global.
type KeyMap struct {
	Up, Down, PageUp, PageDown, Top, Bottom key.Binding
	Open, Back, Quit, Help, NextScreen      key.Binding
	PrevScreen, Filter, ClearFilter         key.Binding
	Rescan, Cancel, Sort, SortReverse       key.Binding
	Processing, Succeeded, Failed           key.Binding
	Reconciled, Unknown, AllStates          key.Binding
	StaleOnly, CycleFlag, Reveal            key.Binding
	Mark, MarkAll, Unmark, Undo             key.Binding
	Expire, Fail, Reconcile, Triage         key.Binding
	GroupBy, CopyKey, CopyCommand           key.Binding
	Search, NextMatch, PrevMatch, Command   key.Binding
}

// DefaultKeyMap follows k9s/vim habits.
func DefaultKeyMap() KeyMap {
	b := func(keys []string, k, h string) key.Binding {
		return key.NewBinding(key.WithKeys(keys...), key.WithHelp(k, h))
	}
	return KeyMap{
		Up:          b([]string{"k", "up"}, "↑/k", "up"),
		Down:        b([]string{"j", "down"}, "↓/j", "down"),
		PageUp:      b([]string{"pgup", "ctrl+b", "ctrl+u"}, "pgup", "page up"),
		PageDown:    b([]string{"pgdown", "ctrl+d"}, "pgdn", "page down"),
		Top:         b([]string{"g", "home"}, "g", "top"),
		Bottom:      b([]string{"G", "end"}, "G", "bottom"),
		Open:        b([]string{"enter"}, "enter", "open"),
		Back:        b([]string{"esc"}, "esc", "back / cancel scan"),
		Quit:        b([]string{"q", "ctrl+c"}, "q", "quit"),
		Help:        b([]string{"?"}, "?", "help"),
		NextScreen:  b([]string{"tab"}, "tab", "next screen"),
		PrevScreen:  b([]string{"shift+tab"}, "shift+tab", "previous screen"),
		Filter:      b([]string{"/"}, "/", "filter"),
		ClearFilter: b([]string{"c"}, "c", "clear filters"),
		Rescan:      b([]string{"r"}, "r", "rescan"),
		Cancel:      b([]string{"esc"}, "esc", "cancel scan"),
		Sort:        b([]string{"s"}, "s", "sort column"),
		SortReverse: b([]string{"S"}, "S", "reverse sort"),
		Processing:  b([]string{"1"}, "1", "processing"),
		Succeeded:   b([]string{"2"}, "2", "succeeded"),
		Failed:      b([]string{"3"}, "3", "failed"),
		Reconciled:  b([]string{"4"}, "4", "reconciled"),
		Unknown:     b([]string{"5"}, "5", "unknown"),
		AllStates:   b([]string{"0"}, "0", "all states"),
		StaleOnly:   b([]string{"x"}, "x", "stale only"),
		CycleFlag:   b([]string{"f"}, "f", "cycle flag filter"),
		Reveal:      b([]string{"v"}, "v", "reveal response"),
		Mark:        b([]string{"space"}, "space", "mark record"),
		MarkAll:     b([]string{"a"}, "a", "mark all in view"),
		Unmark:      b([]string{"u"}, "u", "unmark all"),
		Undo:        b([]string{"u"}, "u", "undo write (Writes)"),
		Expire:      b([]string{"E"}, "E", "expire / delete"),
		Fail:        b([]string{"F"}, "F", "force-fail"),
		Reconcile:   b([]string{"R"}, "R", "mark reconciled"),
		Triage:      b([]string{"V"}, "V", "verify & triage"),
		GroupBy:     b([]string{"="}, "=", "group by capture"),
		CopyKey:     b([]string{"y"}, "y", "copy key"),
		CopyCommand: b([]string{"Y"}, "Y", "copy CLI command"),
		Search:      b([]string{"ctrl+f"}, "ctrl+f", "find a key"),
		NextMatch:   b([]string{"n"}, "n", "next match"),
		PrevMatch:   b([]string{"N"}, "N", "previous match"),
		Command:     b([]string{":"}, ":", "command line"),
	}
}

// writeBindings are the keys that only serve writes: marking picks the
// records a write applies to, and nothing else reads the marks.
func (k *KeyMap) writeBindings() []*key.Binding {
	return []*key.Binding{&k.Mark, &k.MarkAll, &k.Unmark, &k.Expire, &k.Fail, &k.Reconcile, &k.Triage, &k.Undo}
}

// SetWrites enables the write keys, or disables them for a read-only
// session: disabled, they match nothing and leave the help and the footer.
func (k *KeyMap) SetWrites(on bool) {
	for _, b := range k.writeBindings() {
		b.SetEnabled(on)
	}
}

// isWriteKey reports whether msg is one of the write keys, enabled or not,
// so a read-only session can say why it does nothing.
func (k *KeyMap) isWriteKey(msg tea.KeyPressMsg) bool {
	for _, b := range k.writeBindings() {
		if slices.Contains(b.Keys(), msg.String()) {
			return true
		}
	}
	return false
}

// ShortHelp is the always-visible help line.
func (k KeyMap) ShortHelp() []key.Binding {
	return []key.Binding{k.Help, k.NextScreen, k.Open, k.Filter, k.StaleOnly, k.Processing, k.Rescan, k.Quit}
}

// helpGroup is one titled column of the help overlay.
type helpGroup struct {
	title string
	keys  []key.Binding
}

// HelpGroups is the help overlay's content, in the order it flows.
func (k KeyMap) HelpGroups() []helpGroup {
	return []helpGroup{
		{"move", []key.Binding{k.Up, k.Down, k.PageUp, k.PageDown, k.Top, k.Bottom}},
		{"screens", []key.Binding{k.Open, k.Back, k.NextScreen, k.PrevScreen, k.Help, k.Quit}},
		{"filter and sort", []key.Binding{k.Filter, k.ClearFilter, k.StaleOnly, k.CycleFlag, k.Sort, k.SortReverse, k.GroupBy}},
		{"states", []key.Binding{k.Processing, k.Succeeded, k.Failed, k.Reconciled, k.Unknown, k.AllStates}},
		{"write (guarded)", []key.Binding{k.Mark, k.MarkAll, k.Unmark, k.Expire, k.Fail, k.Reconcile}},
		{"find and copy", []key.Binding{k.Search, k.NextMatch, k.PrevMatch, k.CopyKey, k.CopyCommand, k.Command}},
		{"record", []key.Binding{k.Rescan, k.Reveal, k.Triage, k.Undo}}, // V and u are guarded writes too: hidden when read-only
	}
}

type keyBinding = key.Binding
