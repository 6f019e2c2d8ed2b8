package follow_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/inspect/follow"
	"github.com/idemctl/idemctl/internal/appsim"
	"github.com/idemctl/idemctl/internal/testkit/inspecttest"
	"github.com/idemctl/idemctl/internal/testkit/redistest"
)

// A user allowed everything a scan needs but CLIENT TRACKING.
var noTracking = []string{"on", ">pw", "~*", "&*", "+@all", "-client|tracking"}

func userClient(t *testing.T, srv *redistest.Server, user string) *redis.Client {
	c := redis.NewClient(&redis.Options{Addr: srv.Addr, Username: user, Password: "pw"})
	t.Cleanup(func() { c.Close() })
	return c
}

// followChanges checks a follower in mode sees a record reserved,
// completed and deleted.
func followChanges(t *testing.T, writer, c redis.UniversalClient, opt follow.Options, mode follow.Mode, why string) {
	t.Helper()
	ks := inspecttest.Keyspace(t, "atlasmart")
	v, _ := startFollowing(t, c, ks, opt)
	v.waitDone(t, 1, 10*time.Second)
	v.mu.Lock()
	modes := strings.Join(v.modes, "; ")
	v.mu.Unlock()
	if !strings.HasPrefix(modes, mode.String()) || !strings.Contains(modes, why) {
		t.Fatalf("modes %q, want %s saying %q", modes, mode, why)
	}
	ctx := context.Background()
	key := appsim.OrderKey("customer-1", "modes-1")
	appsim.Reserve.Run(ctx, writer, []string{key}, "fp", 60)
	waitRecord(t, v, key, func(r inspect.Record, ok bool) bool { return ok && r.State == inspect.StateProcessing })
	appsim.Complete.Run(ctx, writer, []string{key}, "fp", 201, "{}", 300)
	waitRecord(t, v, key, func(r inspect.Record, ok bool) bool { return ok && r.State == inspect.StateSucceeded })
	writer.Del(ctx, key)
	waitRecord(t, v, key, func(_ inspect.Record, ok bool) bool { return !ok })
}

func waitRecord(t *testing.T, v *followed, key string, want func(inspect.Record, bool) bool) {
	t.Helper()
	for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		v.mu.Lock()
		r, ok := v.recs[key]
		v.mu.Unlock()
		if want(r, ok) {
			return
		}
	}
	t.Fatalf("%s: the followed view did not change within 10s", key)
}

// Where the ACL refuses CLIENT TRACKING and notifications are on, it
// follows by notifications and says why.
func TestFollowNotificationsWhenTrackingRefused(t *testing.T) {
	srv, admin := redistest.OwnClient(t, "--notify-keyspace-events", "KA")
	redistest.ACLUser(t, admin, "watcher", noTracking...)
	followChanges(t, admin, userClient(t, srv, "watcher"), follow.Options{}, follow.ModeNotifications, "tracking refused")
}

// Where neither is possible, it falls back to periodic passes and says
// why in one line.
func TestFollowPeriodicWhenNothingAllowed(t *testing.T) {
	srv, admin := redistest.SharedClient(t)
	redistest.ACLUser(t, admin, "watcher", noTracking...)
	opt := follow.Options{Interval: 200 * time.Millisecond}
	followChanges(t, admin, userClient(t, srv, "watcher"), opt, follow.ModePeriodic, "notifications are off")
}

// A pattern with no literal prefix is not followed: tracking every key
// of the server would cost it too much.
func TestFollowPeriodicWithoutPrefix(t *testing.T) {
	ks := inspecttest.Spec(t, inspect.KeyspaceSpec{Schema: inspecttest.Preset(t, "atlasmart"), Match: "*:idem:*"})
	if _, why := follow.Prefixes([]*inspect.Keyspace{ks}); !strings.Contains(why, "no literal prefix") {
		t.Fatalf("why %q", why)
	}
}

// The inspector role of docs/acl-roles.md with the rights following adds
// (docs/follow.md) tracks.
func TestFollowAsInspector(t *testing.T) {
	srv, admin := redistest.SharedClient(t)
	rules := strings.Fields("on >pw resetkeys ~atlasmart:* resetchannels -@all +ping +info +time +scan +dbsize +type +exists +pttl +hmget +hget +hgetall +hlen +hstrlen +strlen +getrange +memory|usage +object|encoding +cluster|slots +readonly +evalsha +script|load +hello +client|tracking +role")
	redistest.ACLUser(t, admin, "inspector", rules...)
	followChanges(t, admin, userClient(t, srv, "inspector"), follow.Options{}, follow.ModeTracking, "")
}

// Redis refuses overlapping tracking prefixes: one another covers is
// dropped.
func TestPrefixesDropCovered(t *testing.T) {
	spec := func(match string) *inspect.Keyspace {
		return inspecttest.Spec(t, inspect.KeyspaceSpec{Name: match, Schema: inspecttest.Preset(t, "atlasmart"), Match: match})
	}
	got, why := follow.Prefixes([]*inspect.Keyspace{spec("pay:b:*"), spec("pay:*"), spec("ord?:*")})
	if why != "" || strings.Join(got, ",") != "ord,pay:" {
		t.Fatalf("prefixes %q (%s)", got, why)
	}
}
