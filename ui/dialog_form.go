package ui

import (
	"context"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/idemctl/idemctl/actions"
	"github.com/idemctl/idemctl/actions/write"
	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/ui/common"
)

// The dialog's form step: enter on the last field checks the fields and
// plans every target in the background; the plans move the dialog on to
// the confirmation.

// planMsg carries the plans read for the dialog.
type planMsg struct {
	plans []*actions.Plan
	err   error
}

// submitForm validates the form and plans every target in the background.
func (d *dialog) submitForm() tea.Cmd {
	reason := d.value("Reason")
	if reason == "" {
		d.errText = "a reason is required for every write"
		return nil
	}
	if d.entries != nil {
		return d.planEntryWrites(reason)
	}
	ttlText := d.value("TTL")
	if ttlText == string(actions.TTLRetention) {
		ttlText = "" // the field's initial value: the action's default, as with the CLI's unset --ttl
	}
	ttl, err := actions.ParseTTL(d.kind, ttlText)
	if err != nil {
		d.errText = "TTL: " + err.Error()
		return nil
	}
	ref := d.value("Ref")
	if d.needsRef && ref == "" {
		d.errText = "a reference from the authoritative system is required: this schema records it"
		return nil
	}
	d.errText, d.step = "", stepPlanning
	ex, ctx, targets, kind := d.Opts.Executor, d.Ctx, d.targets, d.kind
	if kind == write.KindUndo {
		return d.planUndo(reason)
	}
	return func() tea.Msg {
		plans := make([]*actions.Plan, 0, len(targets))
		for _, r := range targets {
			req := actions.Request{Kind: kind, Keyspace: r.Keyspace, Key: r.Key, Reason: reason, TTL: ttl, Ref: ref,
				Saw: &actions.Seen{State: r.RawState, Fingerprint: r.Fingerprint}}
			pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			p, err := ex.Plan(pctx, req)
			cancel()
			if err != nil {
				return planMsg{err: err}
			}
			plans = append(plans, p)
		}
		return planMsg{plans: plans}
	}
}

// needsRef reports whether any target's schema records a reference: the
// form then asks for one, as the CLI asks for --ref.
func needsRef(kind write.Kind, targets []inspect.Record) bool {
	for i := range targets {
		if actions.NeedsRef(kind, targets[i].Keyspace) {
			return true
		}
	}
	return false
}

func (d *dialog) onPlans(msg planMsg) {
	if d == nil || d.step != stepPlanning {
		return
	}
	if msg.err != nil {
		d.step, d.errText = stepForm, "could not read the "+d.noun()+": "+inspect.Sanitize(msg.err.Error())
		return
	}
	d.plans, d.step = msg.plans, stepConfirm
	d.focusInput()
}

func (d *dialog) sampleLine() string {
	if d.entries != nil {
		return d.entrySample()
	}
	var keys []string
	for i, r := range d.targets {
		if i == 3 {
			keys = append(keys, "… +"+common.Count(len(d.targets)-3))
			break
		}
		keys = append(keys, d.shownKey(displayKey(&r), 10))
	}
	return "records: " + strings.Join(keys, ", ")
}
