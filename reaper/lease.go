package reaper

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/internal/units"
)

// Lease is the leader lease: one key, SET NX PX by whoever takes it,
// renewed and released only by its holder (the token compared in Lua), so
// a copy whose lease lapsed can never extend or drop another's.
type Lease struct {
	Key   string
	TTL   time.Duration
	Token string // this copy's: host/pid/random
	held  bool
}

// NewLease makes this copy's lease on key: its token names the host and
// process, so another copy can say who holds it.
func NewLease(key string, ttl time.Duration) *Lease {
	host, _ := os.Hostname()
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return &Lease{Key: key, TTL: ttl, Token: fmt.Sprintf("%s/%d/%s", host, os.Getpid(), hex.EncodeToString(b))}
}

// LeaseStatus is what a cycle learned about the lease.
type LeaseStatus struct {
	Held   bool   `json:"held"`
	Holder string `json:"holder,omitempty"` // the holder's token (sanitized), when another copy holds it
	TTLms  int64  `json:"ttl_ms,omitempty"` // the other holder's remaining time
	Error  string `json:"error,omitempty"`  // a dry run's lease could not be read (it goes on: it takes nothing)
}

// renewScript extends the lease only for its holder.
var renewScript = redis.NewScript(`
if redis.call('get', KEYS[1]) == ARGV[1] then
  return redis.call('pexpire', KEYS[1], ARGV[2])
end
return 0`)

// releaseScript drops the lease only for its holder.
var releaseScript = redis.NewScript(`
if redis.call('get', KEYS[1]) == ARGV[1] then
  return redis.call('del', KEYS[1])
end
return 0`)

// Acquire renews the lease if this copy holds it, else tries to take it
// (SET NX PX). It reports whether this copy holds it now and, if not, who
// does.
func (l *Lease) Acquire(ctx context.Context, c redis.UniversalClient) (LeaseStatus, error) {
	n, err := renewScript.Run(ctx, c, []string{l.Key}, l.Token, l.TTL.Milliseconds()).Int64()
	if err != nil {
		return LeaseStatus{}, leaseErr("renew", err)
	}
	if n == 1 {
		l.held = true
		return LeaseStatus{Held: true}, nil
	}
	ok, err := c.SetNX(ctx, l.Key, l.Token, l.TTL).Result()
	if err != nil {
		return LeaseStatus{}, leaseErr("take", err)
	}
	l.held = ok
	if ok {
		return LeaseStatus{Held: true}, nil
	}
	return l.Holder(ctx, c)
}

// Holder reads who holds the lease, without taking it (a dry run).
func (l *Lease) Holder(ctx context.Context, c redis.UniversalClient) (LeaseStatus, error) {
	pipe := c.Pipeline()
	get := pipe.Get(ctx, l.Key)
	ttl := pipe.PTTL(ctx, l.Key)
	_, _ = pipe.Exec(ctx)
	if err := get.Err(); err != nil && !errors.Is(err, redis.Nil) {
		return LeaseStatus{}, leaseErr("read", err)
	} // its TTL is only shown: a refused PTTL shows none
	v := get.Val()
	st := LeaseStatus{Held: v != "" && v == l.Token, TTLms: ttl.Val().Milliseconds()}
	if v != "" && !st.Held {
		st.Holder = units.Clip(inspect.Sanitize(v), 120)
	}
	return st, nil
}

// Release drops the lease if this copy holds it.
func (l *Lease) Release(ctx context.Context, c redis.UniversalClient) error {
	if !l.held {
		return nil
	}
	l.held = false
	if err := releaseScript.Run(ctx, c, []string{l.Key}, l.Token).Err(); err != nil {
		return leaseErr("release", err)
	}
	return nil
}

func leaseErr(what string, err error) error {
	msg := units.OneLine(err.Error())
	if aclRefusal(msg) {
		msg += " — the reaper's ACL user needs get, set, pttl, pexpire, del and eval on idemctl:reap:* (see the ACL roles, docs/acl-roles.md)"
	}
	return fmt.Errorf("lease: cannot %s it: %s", what, msg)
}

// aclRefusal recognises the server's ACL refusals, direct or in a script.
func aclRefusal(msg string) bool {
	return strings.HasPrefix(msg, "NOPERM") || strings.Contains(msg, "ACL failure") || strings.Contains(msg, "can't run this command")
}

// String is the status in one line, for the cycle report.
func (s LeaseStatus) String() string {
	switch {
	case s.Error != "":
		return "lease unknown (" + s.Error + ")"
	case s.Held:
		return "lease held by this copy"
	case s.Holder != "":
		return fmt.Sprintf("lease held by %s (for %s more): acting on nothing", s.Holder, units.FormatMs(s.TTLms))
	}
	return "lease free"
}
