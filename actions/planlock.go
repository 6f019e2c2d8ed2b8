package actions

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/idemctl/idemctl/actions/write"
	"github.com/idemctl/idemctl/inspect"
)

// buildLockPlan repairs a lock with no record (an in-flight or abandoned
// request in marker+lock formats): it can only be given a TTL or deleted,
// guarded by its value and length, its version, and the record still not
// existing (the record is the lock's companion).
func buildLockPlan(ctx context.Context, c redis.UniversalClient, req Request) (*Plan, error) {
	p := &Plan{Request: req, planned: time.Now()}
	p.comp = companionKey(req.Keyspace, req.Key, true)
	lock, err := p.readLock(ctx, c)
	if errors.Is(err, errChanging) {
		p.Refused, p.Outcome = err.Error(), write.Conflict
		return p, nil
	}
	if err != nil {
		return nil, err
	}
	if !p.Before.Exists {
		p.Refused, p.Outcome = "the key does not exist", write.NotFound
		return p, nil
	}
	p.Before.Version = p.version.Short()
	if why, outcome := p.lockRefusal(); why != "" {
		p.Refused, p.Outcome = why, outcome
		return p, nil
	}
	p.Delete = req.Kind == write.KindFail || req.TTL.D == 0
	if req.Kind == write.KindFail {
		if err := p.unusedOptions(req.Keyspace.Schema, inspect.ActionSpec{Why: "a lone lock is deleted"}); err != nil {
			p.Refused, p.Outcome = err.Error(), write.Refused
			return p, nil
		}
	}
	p.compileLock(lock)
	return p, nil
}

// lockRead is what guards a lone lock's script besides its version: its
// value's head (up to 256 bytes) and its length.
type lockRead struct {
	value  string
	length string
}

// readLock reads the lock into p.Before, with the server's clock, pinned
// to its version and before-image (pinImage): the value shown is the one
// the script insists on.
func (p *Plan) readLock(ctx context.Context, c redis.UniversalClient) (lockRead, error) {
	var lock lockRead
	key := p.Key
	v, img, err := pinImage(ctx, c, key, p.comp, func() error {
		pipe := c.Pipeline()
		valCmd := pipe.GetRange(ctx, key, 0, 255)
		nCmd := pipe.StrLen(ctx, key)
		ttl := pipe.PTTL(ctx, key)
		typ := pipe.Type(ctx, key)
		now := pipe.Time(ctx)
		if _, err := pipe.Exec(ctx); err != nil && !isServerError(err) {
			return err
		}
		p.nowMs = now.Val().UnixMilli()
		p.Before = write.Snapshot{TTLms: -2}
		if typ.Val() != "none" {
			ms := ttl.Val().Milliseconds()
			if ttl.Val() < 0 {
				ms = int64(ttl.Val())
			}
			lock = lockRead{value: valCmd.Val(), length: strconv.FormatInt(nCmd.Val(), 10)}
			p.Before = write.Snapshot{Exists: true, Type: typ.Val(), State: "(lock only)", Canonical: "processing", TTLms: ms,
				Fields: map[string]string{"value": lock.value}}
		}
		return nil
	})
	if err != nil {
		return lock, err
	}
	p.version, p.img = v, img
	return lock, nil
}

// lockRefusal says why the lock read cannot take this write ("" when it
// can) and as what outcome: a lone lock is only ever given a TTL or
// deleted, and only while its record still does not exist.
func (p *Plan) lockRefusal() (string, write.Outcome) {
	if p.Before.Type != "string" {
		return "the lock is a " + p.Before.Type + ", not a string", write.Refused
	}
	if p.version.Companion != "none" {
		return "the record beside this lock exists now: the request completed; nothing written", write.Conflict
	}
	if why := p.lockChangedSince(); why != "" {
		return "the record changed since you saw it: " + why + "; nothing written", write.Conflict
	}
	if why := p.unexpected(); why != "" {
		return why + ": nothing written", write.Conflict
	}
	if p.Kind == write.KindReconcile {
		return "a lock has no record to reconcile: delete it (fail or expire --ttl 0) once the source of truth is checked", write.Refused
	}
	if p.Kind == write.KindExpire && p.TTL.Mode != TTLSet {
		return "expire needs a TTL (0 deletes the lock)", write.Refused
	}
	return "", ""
}

// lockChangedSince compares the lock read now with what the operator saw
// ("" when they agree, or nothing was seen): its state and its version (a
// lock has no fingerprint).
func (p *Plan) lockChangedSince() string {
	saw := p.Saw
	if saw == nil {
		return ""
	}
	var why []string
	if saw.State != "" && saw.State != p.Before.State {
		why = append(why, "state "+strconv.Quote(inspect.Sanitize(saw.State))+" → "+strconv.Quote(p.Before.State))
	}
	if saw.Version != "" {
		if d := write.DiffShort(saw.Version, p.Before.Version); d != "" {
			why = append(why, "version "+inspect.Sanitize(saw.Version)+" → "+p.Before.Version+": "+d)
		}
	}
	return strings.Join(why, ", ")
}

// compileLock fills the lock's script (casRaw, guarded by the lock's
// value and length) and the diff shown: a new TTL, or the lock deleted.
func (p *Plan) compileLock(lock lockRead) {
	mode, ttlMode, ttlMs := "update", "set", p.TTL.D.Milliseconds()
	if p.Delete {
		mode, ttlMode, ttlMs = "delete", "keep", 0
	}
	p.script = casRaw
	p.args = p.scriptArgs(mode, ttlMode, ttlMs, "", lock.value, "", lock.length, nil)
	p.predict("raw", false, nil, ttlMode, ttlMs)
	if p.Delete {
		p.Changes = []write.Change{{Field: "(lock)", Before: "held", After: "deleted: the next retry runs"}}
	}
}
