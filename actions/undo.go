package actions

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/idemctl/idemctl/actions/audit"
	"github.com/idemctl/idemctl/actions/write"
	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/inspect/glob"
	"github.com/idemctl/idemctl/internal/units"
)

// An undo restores a record to the before-image an audited write kept,
// through the same executor as every write: a compare-and-set on the
// version that write left (its outcome's AfterVersion), so an undo never
// overwrites what the application did since. A record that is no longer
// exactly that is a conflict saying what changed; nothing is written.

// casRestore is the undo script. ARGV: 1 restore|delete, 2-7 unused,
// 8-11 the expected version (the write's after-state, as guardLua checks
// it), 12 the DUMP payload, 13 the absolute expiry in ms (0: none).
var casRestore = newCAS(versionLua + timeLua + guardLua + `
local key = KEYS[1]
local c = checked(key) -- a delete ends here
if c then return c end
local at = tonumber(ARGV[13])
if at > 0 then
  if at <= msn then return {'conflict', 'expired', ARGV[13]} end
  redis.call('RESTORE', key, ARGV[13], ARGV[12], 'REPLACE', 'ABSTTL')
else
  redis.call('RESTORE', key, 0, ARGV[12], 'REPLACE')
end
return applied()
`)

// UndoTarget is an audited write: its intent and its outcome.
type UndoTarget struct {
	Intent  audit.Entry
	Outcome audit.Entry
}

// UndoIndex finds writes in an audit log and what reverted them.
type UndoIndex struct {
	intents  map[string]audit.Entry
	outcomes map[string]audit.Entry
	order    []string       // intent ids, oldest first
	pos      map[string]int // intent id → index in order
	undos    revertIndex
}

// revertIndex maps a write id to the ids of the applied undos of it,
// oldest first.
type revertIndex map[string][]string

// add notes e if it is an applied undo.
func (r revertIndex) add(e audit.Entry) {
	if e.Phase == audit.PhaseOutcome && e.Outcome == write.Applied && e.Action == write.KindUndo && e.Reverts != "" {
		r[e.Reverts] = append(r[e.Reverts], e.ID)
	}
}

// revertedBy is the applied undo whose effect stands on write id ("" when
// none: never reverted, or its undo was itself undone).
func (r revertIndex) revertedBy(id string, depth int) string {
	us := r[id]
	if len(us) == 0 || depth > 64 {
		return ""
	}
	last := us[len(us)-1]
	if r.revertedBy(last, depth+1) != "" {
		return ""
	}
	return last
}

// IndexUndo indexes a log's entries (ReadAudit).
func IndexUndo(entries []audit.Entry) *UndoIndex {
	x := &UndoIndex{intents: map[string]audit.Entry{}, outcomes: map[string]audit.Entry{}, undos: revertIndex{}, pos: map[string]int{}}
	for _, e := range entries {
		switch e.Phase {
		case audit.PhaseIntent:
			if _, seen := x.intents[e.ID]; !seen {
				x.pos[e.ID] = len(x.order)
				x.order = append(x.order, e.ID)
			}
			x.intents[e.ID] = e
		case audit.PhaseOutcome:
			if _, ok := x.intents[e.ID]; !ok {
				continue // a refusal: nothing was written
			}
			x.outcomes[e.ID] = e
			x.undos.add(e)
		}
	}
	return x
}

// RevertedBy is the applied undo whose effect stands on write id ("" when
// none: never reverted, or its undo was itself undone).
func (x *UndoIndex) RevertedBy(id string) string {
	return x.undos.revertedBy(id, 0)
}

// ErrNoWrite: no write in the log has that id.
var ErrNoWrite = errors.New("no write with that id in the audit log")

// Lookup finds a write by its audit id (or an unambiguous start of it).
func (x *UndoIndex) Lookup(id string) (UndoTarget, error) {
	if in, ok := x.intents[id]; ok {
		return UndoTarget{Intent: in, Outcome: x.outcomes[id]}, nil
	}
	var hits []string
	for _, k := range x.order {
		if id != "" && strings.HasPrefix(k, id) {
			hits = append(hits, k)
		}
	}
	switch len(hits) {
	case 0:
		return UndoTarget{}, fmt.Errorf("%q: %w", inspect.Sanitize(id), ErrNoWrite)
	case 1:
		return UndoTarget{Intent: x.intents[hits[0]], Outcome: x.outcomes[hits[0]]}, nil
	}
	return UndoTarget{}, fmt.Errorf("%q is ambiguous: %d writes start with it", inspect.Sanitize(id), len(hits))
}

// Since lists the applied writes at or after t whose effect stands (not
// reverted), newest first. Undos themselves are left out: undoing
// everything since t puts the records back as they were at t.
func (x *UndoIndex) Since(t time.Time) []UndoTarget {
	var out []UndoTarget
	for i := len(x.order) - 1; i >= 0; i-- {
		id := x.order[i]
		in, o := x.intents[id], x.outcomes[id]
		at, err := time.Parse(time.RFC3339Nano, in.Time)
		if err != nil || at.Before(t) {
			continue
		}
		if o.Outcome != write.Applied || in.Action == write.KindUndo || x.RevertedBy(id) != "" {
			continue
		}
		out = append(out, UndoTarget{Intent: in, Outcome: o})
	}
	return out
}

// NewestFirst orders targets as an undo runs them: the latest write first,
// so each undo finds the record as the write it reverts left it.
func (x *UndoIndex) NewestFirst(ts []UndoTarget) {
	sort.SliceStable(ts, func(i, j int) bool { return x.pos[ts[i].Intent.ID] > x.pos[ts[j].Intent.ID] })
}

// Undoable says why a write cannot be undone ("" when it can).
func (x *UndoIndex) Undoable(t UndoTarget) string {
	if by := x.RevertedBy(t.Intent.ID); by != "" {
		return "already reverted by undo " + by + " (undo that to re-apply it)"
	}
	return undoableWhy(t)
}

func undoableWhy(t UndoTarget) string {
	in, o := t.Intent, t.Outcome
	if in.Entry != nil {
		return entryUndoableWhy(t)
	}
	switch {
	case in.Undoable != nil && !*in.Undoable:
		return "not undoable: " + in.UndoNote
	case in.Image == nil:
		return "not undoable: the log holds no before-image for it (written by an idemctl before undo existed)"
	case o.ID == "":
		return "its outcome is not in the log (in doubt): re-run that write's command to settle it first"
	case o.Outcome != write.Applied:
		return fmt.Sprintf("the write was not applied (%s): there is nothing to undo", o.Outcome)
	case o.AfterVersion == nil:
		return "the log does not say what the write left (its outcome was settled by a re-read): undo cannot check the record is still that"
	}
	return ""
}

// chainState is what an earlier undo of the same batch leaves a key (or
// a pending entry) as.
type chainState struct {
	image *write.Image
	snap  write.Snapshot
	entry *entryChain // a pending entry's (entryundo.go)
}

// PlanUndo plans an undo of each target, in the order given (newest
// first, see NewestFirst). Two writes of one key chain: the older one's
// undo expects the record as the newer one's undo restores it. Each plan
// announces whether it is itself undoable (UndoNote).
func (e *Executor) PlanUndo(ctx context.Context, x *UndoIndex, targets []UndoTarget, kss []*inspect.Keyspace, reason string) ([]*Plan, error) {
	if strings.TrimSpace(reason) == "" {
		return nil, errors.New("a reason is required for every write")
	}
	chain := map[string]*chainState{}
	var out []*Plan
	for _, t := range targets {
		key, target := t.Intent.ExactKey(), auditTarget(t.Intent)
		p, err := e.planUndo(ctx, x, t, keyspaceNamed(kss, t.Intent.Keyspace, key), reason, chain[target])
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", inspect.Sanitize(key), err)
		}
		delete(chain, target)
		if p.Refused == "" {
			chain[target] = &chainState{image: t.Intent.Image, snap: *t.Intent.Before, entry: entryChainOf(t.Intent)}
		}
		out = append(out, p)
	}
	return out, nil
}

// keyspaceNamed is the keyspace the write was made in: by its name, or
// else the first whose pattern matches the key (a session started with
// other flags may name it otherwise).
func keyspaceNamed(kss []*inspect.Keyspace, name, key string) *inspect.Keyspace {
	for _, ks := range kss {
		if ks.Name == name {
			return ks
		}
	}
	for _, ks := range kss {
		if glob.Match(ks.Match, key) {
			return ks
		}
	}
	return nil
}

// planUndo plans the undo of one write: a restore of its before-image,
// pinned to the version that write left, and refused if the record is no
// longer that version or the image cannot be restored.
func (e *Executor) planUndo(ctx context.Context, x *UndoIndex, t UndoTarget, ks *inspect.Keyspace, reason string, prior *chainState) (*Plan, error) {
	in := t.Intent
	if in.Entry != nil { // a pending-entry retry (entryundo.go)
		return e.planEntryUndo(ctx, x, t, reason, prior)
	}
	p := &Plan{Request: Request{Kind: write.KindUndo, Keyspace: ks, Key: in.ExactKey(), Reason: reason, By: e.Identity.OSUser}, planned: time.Now()}
	p.reverts = &in
	if ks == nil {
		p.Refused, p.Outcome = fmt.Sprintf("no keyspace %q in this configuration (the write was made in it): use the profile it was made with", inspect.Sanitize(in.Keyspace)), write.Refused
		return p, nil
	}
	if why := x.Undoable(t); why != "" {
		p.Refused, p.Outcome = why, write.Refused
		return p, nil
	}
	want := *t.Outcome.AfterVersion
	cur, err := p.undoCurrent(ctx, e.Client, prior)
	if errors.Is(err, errChanging) {
		p.Refused, p.Outcome = err.Error(), write.Conflict
		return p, nil
	} else if err != nil {
		return nil, err
	}
	if cur != want {
		p.Refused, p.Outcome = "the record is not as that write left it: "+drift(in.After, want, p.Before, cur)+"; nothing written", write.Conflict
		return p, nil
	}
	im := in.Image
	payload, err := im.Payload()
	if err != nil {
		p.Refused, p.Outcome = "the log's before-image does not decode: "+err.Error(), write.Refused
		return p, nil
	}
	now := time.Now().UnixMilli()
	if p.img.image != nil {
		now = p.img.image.NowMs
	}
	if im.Exists && im.ExpireAtMs > 0 && im.ExpireAtMs <= now {
		p.Refused, p.Outcome = fmt.Sprintf("the record would have expired at %s (its TTL when the write read it): restored, it would be gone at once; nothing to restore",
			time.UnixMilli(im.ExpireAtMs).UTC().Format(time.RFC3339)), write.Refused
		return p, nil
	}
	p.compileRestore(in, want, payload, now)
	p.UndoNote = undoNote(e.auditValues(), p)
	return p, nil
}

// undoCurrent reads what the undo would overwrite, with its version: as
// an earlier undo of the same batch leaves the key (prior), or else the
// record (or lone lock) as it is now.
func (p *Plan) undoCurrent(ctx context.Context, c redis.UniversalClient, prior *chainState) (write.Version, error) {
	isLock := false
	if lk := p.Keyspace.Schema.Lock; lk != nil {
		_, isLock = lk.RecordKey(p.Key)
	}
	p.comp = companionKey(p.Keyspace, p.Key, isLock)
	if prior != nil {
		p.Before, p.img = prior.snap, imageRead{image: prior.image}
		return prior.image.Version, nil
	}
	return p.readCurrent(ctx, c, isLock)
}

// compileRestore fills the restore script (the before-image back, or the
// key the write created deleted), pinned to want, and the after-snapshot
// shown: the record as the write read it, its TTL what is left at now of
// the expiry it had.
func (p *Plan) compileRestore(in audit.Entry, want write.Version, payload []byte, now int64) {
	im := in.Image
	mode := "restore"
	after := write.Snapshot{TTLms: -2}
	if im.Exists {
		after = *in.Before
		after.Fields = make(map[string]string, len(in.Before.Fields))
		for k, v := range in.Before.Fields {
			after.Fields[k] = v
		}
		after.TTLms = -1
		if im.ExpireAtMs > 0 {
			after.TTLms = im.ExpireAtMs - now
		}
	} else {
		mode, p.Delete = "delete", true
	}
	p.After = after
	p.version, p.script, p.nowMs = want, casRestore, now
	p.args = []any{mode, "", 0, "", "", "", "", want.Type, want.Content, want.Expiry, want.Companion, string(payload), im.ExpireAtMs}
	p.Changes = diffSnapshots(p.Before, after)
	if p.Before.Exists != after.Exists {
		p.Changes = append([]write.Change{{Field: "(key)", Before: existence(p.Before.Exists), After: existence(after.Exists)}}, p.Changes...)
	}
}

func existence(ok bool) string {
	if ok {
		return "exists"
	}
	return "absent"
}

// readCurrent reads the record as it is now, with its version and image
// (the undo's own before-image, so an undo can be undone).
func (p *Plan) readCurrent(ctx context.Context, c redis.UniversalClient, isLock bool) (write.Version, error) {
	if !isLock {
		s, _, v, unread, err := readPinned(ctx, c, p.Keyspace, p.Key, p.comp, &p.img)
		if err != nil {
			return v, err
		}
		if unread != nil {
			return v, fmt.Errorf("the record's version could not be read: %w", unread)
		}
		p.Before = s
		return v, nil
	}
	v, img, err := pinImage(ctx, c, p.Key, p.comp, func() error { return nil })
	if err != nil {
		return v, err
	}
	p.img = img
	p.Before = write.Snapshot{TTLms: -2}
	if v.Type != "none" {
		// a lone lock: its value is the lock's, never shown
		p.Before = write.Snapshot{Exists: true, Type: v.Type, State: "(lock only)", Canonical: "processing", Version: v.Short()}
		if img.image != nil {
			p.Before.TTLms = img.image.TTLms
		}
	}
	return v, nil
}

// drift says what changed between the record a write left (its planned
// after-snapshot and the version it left) and the record now: existence,
// state, the fields by name, the TTL, the lock.
func drift(left *write.Snapshot, want write.Version, now write.Snapshot, cur write.Version) string {
	switch {
	case want.Type != "none" && cur.Type == "none":
		return "the key is gone (it expired or was deleted)"
	case want.Type == "none" && cur.Type != "none":
		return fmt.Sprintf("the key was re-created (state %q)", inspect.Sanitize(now.State))
	case want.Type != cur.Type:
		return "its type is now " + cur.Type
	}
	var out []string
	if left != nil {
		if left.State != now.State {
			out = append(out, fmt.Sprintf("state %q → %q", inspect.Sanitize(left.State), inspect.Sanitize(now.State)))
		}
		var names []string
		for _, c := range diffSnapshots(*left, write.Snapshot{Fields: now.Fields, TTLms: left.TTLms}) {
			if strings.HasPrefix(c.Before, "(server time") || c.Field == "(ttl)" {
				continue
			}
			names = append(names, inspect.Sanitize(c.Field))
		}
		if len(names) > 0 {
			out = append(out, "fields changed: "+strings.Join(names, ", "))
		}
	}
	if want.Content != cur.Content && len(out) == 0 {
		out = append(out, "its stored fields changed (ones the log does not show)")
	}
	if want.Expiry != cur.Expiry {
		out = append(out, "its TTL changed (now "+units.FormatTTL(now.TTLms)+")")
	}
	if want.Companion != cur.Companion {
		out = append(out, "its lock companion changed")
	}
	if len(out) == 0 {
		return "its version differs"
	}
	return strings.Join(out, ", ")
}

// Reverts is the audit id of the write an undo plan reverts ("" for
// other writes).
func (p *Plan) Reverts() string {
	if p.reverts == nil {
		return ""
	}
	return p.reverts.ID
}
