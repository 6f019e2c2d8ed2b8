package ui

import (
	"strings"

	tea "charm.land/bubbletea/v2"
)

func (d *dialog) SetSize(width, height int) { d.w, d.h = width, height }

// Update takes the plans and the hooks' verdicts as they come, and the
// keys of each step; other messages (the cursor's blink) go to the input
// in focus.
func (d *dialog) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case planMsg:
		d.onPlans(msg)
		return nil
	case triageMsg:
		d.onTriage(msg)
		return nil
	case tea.KeyPressMsg:
		return d.onKey(msg)
	}
	var cmd tea.Cmd
	switch d.step {
	case stepForm:
		d.inputs[d.focus], cmd = d.inputs[d.focus].Update(msg)
	case stepProfile, stepConfirm:
		d.confirm, cmd = d.confirm.Update(msg)
	}
	return cmd
}

// onKey is a key of the step shown: esc while running stops before the
// next write.
func (d *dialog) onKey(msg tea.KeyPressMsg) tea.Cmd {
	key := msg.String()
	switch {
	case key == "esc" && d.step == stepRunning:
		d.cancel() // the report says what was done
		return nil
	case d.step == stepProfile && key == "enter":
		return d.confirmProfile()
	case d.step == stepForm:
		if cmd, ok := d.onFormKey(key); ok {
			return cmd
		}
	case d.step == stepConfirm:
		if d.onPlanKey(msg) {
			return nil
		}
	case d.step != stepProfile:
		return nil
	}
	var cmd tea.Cmd
	if d.step == stepForm {
		d.inputs[d.focus], cmd = d.inputs[d.focus].Update(msg)
	} else {
		d.confirm, cmd = d.confirm.Update(msg)
	}
	return cmd
}

// confirmProfile checks the protected profile's name typed.
func (d *dialog) confirmProfile() tea.Cmd {
	if err := d.Opts.Executor.Policy.ConfirmProfile(strings.TrimSpace(d.confirm.Value())); err != nil {
		d.errText = err.Error()
		return nil
	}
	d.errText, d.step = "", stepForm
	d.confirm.SetValue("")
	if d.kind == kindTriage {
		return d.askHooks()
	}
	return d.focusInput()
}

// onFormKey moves between the form's fields; enter on the last submits.
func (d *dialog) onFormKey(key string) (tea.Cmd, bool) {
	switch key {
	case "tab", "down":
		d.focus = (d.focus + 1) % len(d.inputs)
		return d.focusInput(), true
	case "shift+tab", "up":
		d.focus = (d.focus + len(d.inputs) - 1) % len(d.inputs)
		return d.focusInput(), true
	case "enter":
		if d.focus < len(d.inputs)-1 {
			d.focus++
			return d.focusInput(), true
		}
		return d.submitForm(), true
	}
	return nil, false
}
