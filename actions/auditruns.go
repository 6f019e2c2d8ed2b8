package actions

import (
	"fmt"
	"sort"
	"strings"

	"github.com/idemctl/idemctl/actions/audit"
	"github.com/idemctl/idemctl/actions/write"
)

// RunSummary is what the audit log says about one run, all its executions
// together (a re-run of the same input has the same id).
type RunSummary struct {
	ID         string     `json:"id"`
	Started    string     `json:"started"` // its first entry
	Last       string     `json:"last"`    // its last entry
	Operator   string     `json:"operator"`
	Profile    string     `json:"profile"`
	Action     write.Kind `json:"action"`
	Reason     string     `json:"reason"`
	Executions int        `json:"executions"`
	Planned    int        `json:"planned"`
	Applied    int        `json:"applied"`
	Conflict   int        `json:"conflict"`
	Failed     int        `json:"failed"` // error, unknown, not_applied, refused
	InDoubt    int        `json:"in_doubt"`
	// Unapplied counts the keys planned and not applied (a conflict, a
	// failure, in doubt, not attempted); Undone is its former name, kept
	// for scripts: it never meant reverted.
	Unapplied int `json:"unapplied"`
	Undone    int `json:"undone"`
	// Reverted counts the run's applied writes an undo has since reverted.
	Reverted int `json:"reverted"`
	// Command is what the run was: "triage" when its writes carry a
	// verify hook's verdicts, else its action. Action is the first
	// write's action; Actions counts the writes attempted by action, a
	// triage's mix of fail and reconcile (or retry and ack).
	Command string             `json:"command"`
	Actions map[write.Kind]int `json:"actions"`
}

// Label names the run by what it did: its action, or its command and the
// mix of actions it wrote ("triage: fail 17, reconcile 3").
func (s RunSummary) Label() string {
	if s.Command == string(s.Action) && len(s.Actions) <= 1 {
		return string(s.Action)
	}
	kinds := make([]write.Kind, 0, len(s.Actions))
	for k := range s.Actions {
		kinds = append(kinds, k)
	}
	sort.Slice(kinds, func(i, j int) bool {
		if s.Actions[kinds[i]] != s.Actions[kinds[j]] {
			return s.Actions[kinds[i]] > s.Actions[kinds[j]]
		}
		return kinds[i] < kinds[j]
	})
	parts := make([]string, len(kinds))
	for i, k := range kinds {
		parts[i] = fmt.Sprintf("%s %d", k, s.Actions[k])
	}
	if len(parts) == 0 {
		return s.Command
	}
	if s.Command == "" || s.Command == string(s.Action) {
		return strings.Join(parts, ", ")
	}
	return s.Command + ": " + strings.Join(parts, ", ")
}

// RunKey is a planned key a run left undone, with the last thing the log
// says about it.
type RunKey struct {
	Key    string `json:"key"`
	Last   string `json:"last"` // an outcome, "in_doubt" (an intent without outcome) or "not_attempted"
	Detail string `json:"detail,omitempty"`
	Time   string `json:"time,omitempty"`
}

// RunReport is a run's summary, the keys it left undone, and its writes.
type RunReport struct {
	RunSummary
	UndoneKeys []RunKey `json:"undone_keys"`
	// Writes are the writes the run attempted (an intent each), with the
	// id `idemctl undo` takes and whether it can.
	Writes []RunWrite `json:"writes"`
}

// RunWrite is one attempted write of a run.
type RunWrite struct {
	ID      string        `json:"id"`
	Key     string        `json:"key"`
	Action  write.Kind    `json:"action"`
	Outcome write.Outcome `json:"outcome,omitempty"` // "" in doubt
	Reverts string        `json:"reverts,omitempty"` // an undo: the write it reverts
	// Undo is "undoable", "reverted by ID" (an applied undo stands on it),
	// "not undoable: why", or "" (not applied: nothing to undo).
	Undo string `json:"undo,omitempty"`

	undoable bool
	note     string
	after    bool
}

// undoStatus says what an undo of w would do.
func (w RunWrite) undoStatus(reverted revertIndex) string {
	switch {
	case w.Outcome != write.Applied:
		return ""
	case reverted.revertedBy(w.ID, 0) != "":
		return "reverted by " + reverted.revertedBy(w.ID, 0)
	case !w.undoable:
		return "not undoable: " + w.note
	case !w.after:
		return "not undoable: the log does not say what the write left"
	}
	return "undoable"
}

// Lasts of a RunKey besides outcomes.
const (
	LastInDoubt      = "in_doubt"
	LastNotAttempted = "not_attempted"
)

type runAcc struct {
	rep     RunReport
	keys    []string
	planned map[string]bool
	execs   map[string]bool
	applied map[string]bool
	last    map[string]RunKey
	open    map[string]string // intent id → key
	writes  []RunWrite
	wpos    map[string]int // intent id → index in writes
	triage  bool           // a write carries a verify hook's verdict
}

// AuditRuns reads the log and sums up every named run, oldest first, with
// the log's torn and bad lines.
func AuditRuns(path string) ([]RunReport, *audit.Log, error) {
	runs := map[string]*runAcc{}
	var order []string
	reverted := revertIndex{}
	lg := &audit.Log{}
	var err error
	lg.Torn, lg.Bad, err = audit.Scan(path, nil, func(e audit.Entry) {
		reverted.add(e)
		if e.Run == "" {
			return
		}
		r := runs[e.Run]
		if r == nil {
			r = &runAcc{planned: map[string]bool{}, execs: map[string]bool{}, applied: map[string]bool{},
				last: map[string]RunKey{}, open: map[string]string{}, wpos: map[string]int{}}
			r.rep.ID, r.rep.Started, r.rep.Operator, r.rep.Profile, r.rep.Action, r.rep.Reason =
				e.Run, e.Time, e.OSUser, e.Profile, e.Action, e.Reason
			runs[e.Run] = r
			order = append(order, e.Run)
		}
		r.rep.Last = e.Time
		r.add(e)
	})
	if err != nil {
		return nil, nil, err
	}
	out := make([]RunReport, 0, len(order))
	for _, id := range order {
		out = append(out, runs[id].report(reverted))
	}
	return out, lg, nil
}

func (r *runAcc) plan(k string) {
	if !r.planned[k] {
		r.planned[k] = true
		r.keys = append(r.keys, k)
	}
}

func (r *runAcc) add(e audit.Entry) {
	switch e.Phase {
	case audit.PhasePlan:
		if e.Part <= 1 {
			r.execs[e.ID] = true
		}
		for _, k := range e.RunPlan.ExactKeys() {
			r.plan(k)
		}
	case audit.PhaseIntent:
		k := e.ExactKey()
		r.plan(k)
		r.open[e.ID] = k
		r.last[k] = RunKey{Key: k, Last: LastInDoubt, Detail: "an intent without an outcome: the run stopped between them; re-run it to settle", Time: e.Time}
		r.wpos[e.ID] = len(r.writes)
		r.triage = r.triage || e.Evidence != nil
		r.writes = append(r.writes, RunWrite{ID: e.ID, Key: k, Action: e.Action, Reverts: e.Reverts,
			undoable: e.Undoable != nil && *e.Undoable && e.Image != nil, note: e.UndoNote})
		if e.Image == nil && e.UndoNote == "" {
			r.writes[len(r.writes)-1].note = "the log holds no before-image for it"
		}
	case audit.PhaseOutcome:
		k := e.ExactKey()
		r.plan(k)
		delete(r.open, e.ID)
		if e.Outcome == write.Applied {
			r.applied[k] = true
		}
		if i, ok := r.wpos[e.ID]; ok {
			r.writes[i].Outcome, r.writes[i].after = e.Outcome, e.AfterVersion != nil
		}
		r.last[k] = RunKey{Key: k, Last: string(e.Outcome), Detail: e.Detail, Time: e.Time}
	}
}

func (r *runAcc) report(reverted revertIndex) RunReport {
	rep := r.rep
	rep.Writes = make([]RunWrite, len(r.writes))
	rep.Actions = map[write.Kind]int{}
	for i, w := range r.writes {
		w.Undo = w.undoStatus(reverted)
		rep.Writes[i] = w
		rep.Actions[w.Action]++
		if strings.HasPrefix(w.Undo, "reverted by ") {
			rep.Reverted++
		}
	}
	rep.Command = string(rep.Action)
	if r.triage {
		rep.Command = "triage"
	}
	rep.Executions = max(len(r.execs), 1)
	rep.Planned = len(r.keys)
	for _, k := range r.keys {
		if r.applied[k] {
			rep.Applied++
			continue
		}
		l, ok := r.last[k]
		if !ok {
			l = RunKey{Key: k, Last: LastNotAttempted, Detail: "no write attempted: refused while planning (gone, not a record the action applies to) or the run stopped first"}
		}
		switch write.Outcome(l.Last) {
		case write.Conflict:
			rep.Conflict++
		case write.Failed, write.Unknown, write.NotApplied, write.Refused:
			rep.Failed++
		}
		if l.Last == LastInDoubt {
			rep.InDoubt++
		}
		rep.UndoneKeys = append(rep.UndoneKeys, l)
	}
	rep.Unapplied = len(rep.UndoneKeys)
	rep.Undone = rep.Unapplied
	if rep.UndoneKeys == nil {
		rep.UndoneKeys = []RunKey{}
	}
	return rep
}

// FindRun picks the run whose id is id or starts with it (unambiguously).
func FindRun(runs []RunReport, id string) (*RunReport, []string) {
	var hits []string
	var found *RunReport
	for i := range runs {
		if runs[i].ID == id {
			return &runs[i], nil
		}
		if id != "" && strings.HasPrefix(runs[i].ID, id) {
			hits = append(hits, runs[i].ID)
			found = &runs[i]
		}
	}
	if len(hits) == 1 {
		return found, nil
	}
	sort.Strings(hits)
	return nil, hits
}
