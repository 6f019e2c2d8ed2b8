package reaper

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/idemctl/idemctl/internal/testkit/recordtest"
	"github.com/idemctl/idemctl/internal/testkit/redistest"
)

// readmeRole is the documented ACL SETUSER line for user, with the test's
// password and its keys added, as docs/acl-roles.md says to adjust them.
func readmeRole(t *testing.T, user, password string, keys ...string) []any {
	t.Helper()
	b, err := os.ReadFile("../docs/acl-roles.md")
	if err != nil {
		t.Fatal(err)
	}
	var args []any
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "ACL SETUSER "+user+" ") {
			for _, f := range strings.Fields(l) {
				if f == ">PASSWORD" {
					f = ">" + password
				}
				args = append(args, f)
			}
		}
	}
	if len(args) == 0 {
		t.Fatalf("docs/acl-roles.md has no ACL SETUSER line for %s", user)
	}
	for _, k := range keys {
		args = append(args, "~"+k)
	}
	return args
}

// The documented reaper role is enough for a whole applying cycle: the
// lease, the budget, the guarded writes and the audit.
func TestReadmeReaperRole(t *testing.T) {
	srv, admin := redistest.SharedClient(t)
	ctx := t.Context()
	role := readmeRole(t, "idemctl-reaper", "reaper-pw", "job:*")
	if ok, _ := redistest.HasFieldTTL(admin); ok {
		role = append(role, "+hpttl", "+hpexpiretime", "+hpexpireat", "+hpexpire", "+hpersist", "+hkeys")
	}
	if err := admin.Do(ctx, role...).Err(); err != nil {
		t.Fatalf("the documented role: %v", err)
	}
	t.Cleanup(func() { admin.Do(ctx, "ACL", "DELUSER", "idemctl-reaper") })
	writeJobs(t, admin, orphans("acl", 3)...)
	c := redis.NewClient(&redis.Options{Addr: srv.Addr, Username: "idemctl-reaper", Password: "reaper-pw"})
	defer c.Close()
	p := policy(t, basePolicy, false)
	r := newReaper(t, c, p, true, recordtest.AuditPath(t))
	rep := r.Cycle(ctx)
	if rep.Err != "" || !rep.Lease.Held || rep.Rules[0].Outcomes["applied"] != 3 || rep.Rules[0].Note != "" || rep.Rules[0].Err != "" {
		t.Fatalf("cycle as the documented reaper role: %+v", rep)
	}
	if err := r.Lease.Release(ctx, c); err != nil {
		t.Fatal(err)
	}
	if admin.Exists(ctx, p.LeaseKey).Val() != 0 || admin.Exists(ctx, "idemctl:reap:budget:test:jobs:fail").Val() != 1 {
		t.Error("lease not released, or budget not recorded")
	}
	// without the reaper's additions the lease is refused, and nothing acts
	if err := admin.Do(ctx, "ACL", "SETUSER", "idemctl-reaper", "-set").Err(); err != nil {
		t.Fatal(err)
	}
	writeJobs(t, admin, orphans("acl2-", 1)...)
	rep = newReaper(t, c, p, true, recordtest.AuditPath(t)).Cycle(ctx)
	if !strings.Contains(rep.Err, "NOPERM") || !strings.Contains(rep.Err, "ACL roles") || len(rep.Rules) != 0 {
		t.Errorf("without SET: %+v", rep)
	}
}

// A lock companion whose TTL cannot be read (PTTL refused) leaves its
// record alone: its worker may be alive.
func TestLockUnknownIsSkipped(t *testing.T) {
	srv, admin := redistest.SharedClient(t)
	ctx := t.Context()
	role := append(readmeRole(t, "idemctl-inspector", "insp-pw", "job:*", "idemctl:reap:*"), "-pttl")
	if err := admin.Do(ctx, role...).Err(); err != nil {
		t.Fatalf("the documented role: %v", err)
	}
	t.Cleanup(func() { admin.Do(ctx, "ACL", "DELUSER", "idemctl-inspector") })
	writeJobs(t, admin, job{key: "job:lockttl", age: time.Hour})
	c := redis.NewClient(&redis.Options{Addr: srv.Addr, Username: "idemctl-inspector", Password: "insp-pw"})
	defer c.Close()
	rep := newReaper(t, c, policy(t, basePolicy, false), false, "").Cycle(ctx)
	if len(rep.Rules) != 1 {
		t.Fatalf("cycle: %+v", rep)
	}
	if rr := rep.Rules[0]; rr.Skips[SkipLockUnknown] != 1 || len(rr.Outcomes) != 0 {
		t.Fatalf("lock TTL unreadable: %+v", rep)
	}
}
