package common

import (
	"slices"
	"strings"

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
	Retry, Ack, DeadLetter                  key.Binding // the Streams screen's pending entries
	GroupBy, CopyKey, CopyCommand           key.Binding
	Search, NextMatch, PrevMatch, Command   key.Binding
	Warning                                 key.Binding // a warning banner whole
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
		Retry:       b([]string{"T"}, "T", "retry"),
		Ack:         b([]string{"A"}, "A", "ack"),
		DeadLetter:  b([]string{"D"}, "D", "dead-letter"),
		GroupBy:     b([]string{"="}, "=", "group by capture"),
		CopyKey:     b([]string{"y"}, "y", "copy key"),
		CopyCommand: b([]string{"Y"}, "Y", "copy CLI command"),
		Search:      b([]string{"ctrl+f"}, "ctrl+f", "find a key"),
		NextMatch:   b([]string{"n"}, "n", "next match"),
		PrevMatch:   b([]string{"N"}, "N", "previous match"),
		Command:     b([]string{":"}, ":", "command line (:streams)"),
		Warning:     b([]string{"w"}, "w", "whole warning banner"),
	}
}

// writeBindings are the keys that serve writes: marking picks the records a
// write applies to (and, on a snapshot, the rows Y pins for a live write).
func (k *KeyMap) writeBindings() []*key.Binding {
	return []*key.Binding{&k.Mark, &k.MarkAll, &k.Unmark, &k.Expire, &k.Fail, &k.Reconcile, &k.Triage, &k.Undo}
}

// SetWrites enables the write keys, or disables them for a read-only
// session: disabled, they match nothing and leave the footer; the help
// still lists them, dim, under a line saying how to turn writes on (as
// k9s shows its disabled actions in read-only mode). marks keeps the
// marking keys on in a session that cannot write but copies the marked
// rows (a snapshot's Y).
func (k *KeyMap) SetWrites(on, marks bool) {
	for _, b := range append(k.writeBindings(), &k.Retry, &k.Ack, &k.DeadLetter) {
		b.SetEnabled(on)
	}
	for _, b := range []*key.Binding{&k.Mark, &k.MarkAll, &k.Unmark} {
		b.SetEnabled(on || marks)
	}
}

// IsWriteKey reports whether msg is a write key that is off, so a session
// that cannot write can say why it does nothing; a key an enabled binding
// also holds (u: unmark on a snapshot, undo elsewhere) is not one.
func (k *KeyMap) IsWriteKey(msg tea.KeyPressMsg) bool {
	off := false
	for _, b := range k.writeBindings() {
		if slices.Contains(b.Keys(), msg.String()) {
			if b.Enabled() {
				return false
			}
			off = true
		}
	}
	return off
}

// WritesOff is the footer's word, in a session that cannot write, that the
// write keys among bs exist and are off, and why (see writesOffNote). It
// is for the footer only: it matches no key.
func WritesOff(why string, bs ...key.Binding) key.Binding {
	var names []string
	for _, b := range bs {
		if !b.Enabled() {
			names = append(names, b.Help().Key)
		}
	}
	return key.NewBinding(key.WithKeys("(writes off)"), key.WithHelp(strings.Join(names, "/"), why))
}

// ShortHelp is the records screen's help line in a session that cannot
// write: the write keys where a writing session has them, said off (off
// says how they come on).
func (k KeyMap) ShortHelp(off string) []key.Binding {
	return []key.Binding{k.Help, k.Filter, k.StaleOnly, WritesOff(off, k.Fail, k.Reconcile, k.Expire, k.Mark),
		k.NextScreen, k.Open, k.Processing, k.Rescan, k.Quit}
}

// HelpGroup is one titled column of the help overlay.
type HelpGroup struct {
	Title string
	Keys  []key.Binding
}

// HelpGroups is the help overlay's content, in the order it flows. The
// write keys keep their places when writes are off: the overlay shows
// them disabled.
func (k KeyMap) HelpGroups() []HelpGroup {
	write := "write (guarded)"
	if !k.Fail.Enabled() {
		write = "write (off)"
	}
	return []HelpGroup{
		{"move", []key.Binding{k.Up, k.Down, k.PageUp, k.PageDown, k.Top, k.Bottom}},
		{"screens", []key.Binding{k.Open, k.Back, k.NextScreen, k.PrevScreen, k.Help, k.Quit}},
		{"filter and sort", []key.Binding{k.Filter, k.ClearFilter, k.StaleOnly, k.CycleFlag, k.Sort, k.SortReverse, k.GroupBy}},
		{"states", []key.Binding{k.Processing, k.Succeeded, k.Failed, k.Reconciled, k.Unknown, k.AllStates}},
		{write, []key.Binding{k.Mark, k.MarkAll, k.Unmark, k.Expire, k.Fail, k.Reconcile}},
		{"find and copy", []key.Binding{k.Search, k.NextMatch, k.PrevMatch, k.CopyKey, k.CopyCommand, k.Command}},
		{"record", []key.Binding{k.Rescan, k.Reveal, k.Triage, k.Undo, k.Warning}}, // V and u are guarded writes too: dim when read-only
	}
}

// KeyBinding is a key of a footer or the help.
type KeyBinding = key.Binding
