package actions

import (
	"errors"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/idemctl/idemctl/actions/write"
	"github.com/idemctl/idemctl/internal/testkit/redistest"
)

// Entry plans run in one ApplyAll with record plans, and wait for the
// replica like them.
func TestEntryMixedRunWaitsForTheReplica(t *testing.T) {
	primary, replica := redistest.OwnWithReplica(t)
	r := newRig(t, primary)
	ids := seedPending(t, r.c, testStream, 1)
	plans := append(r.reservePlans("mixed", 1, Request{Kind: write.KindFail}), r.planEntry(EntryRequest{Kind: write.KindAck, ID: ids[0]}))
	for _, res := range r.ex.ApplyAll(t.Context(), plans, 0, nil) {
		if res.Outcome != write.Applied || res.Replication == nil || res.Wanted != 1 || res.Acked != 1 || res.Unreplicated() {
			t.Fatalf("%s: %+v %+v", res.Action, res, res.Replication)
		}
	}
	rc := replica.Client(0)
	defer rc.Close()
	if n, err := rc.XPending(t.Context(), testStream, testGroup).Result(); err != nil || n.Count != 0 {
		t.Fatalf("the replica's pending list: %+v %v", n, err)
	}
	r.verified()
}

// An ACL user without +xclaim is refused before anything is written,
// with NOPERM and the rights the role needs.
func TestEntryACLWithoutXclaim(t *testing.T) {
	r := sharedRig(t)
	ids := seedPending(t, r.c, testStream, 1)
	ex := aclUser(t, r, "idem-noclaim", readRights, scriptRights, []string{"+xack", "+xadd", "+xpending", "+xrange"})
	p, err := ex.PlanEntry(t.Context(), EntryRequest{Kind: write.KindRetry, Stream: testStream, Group: testGroup, ID: ids[0], RecoveryConsumer: recovery, Reason: "acl"})
	if err != nil || p.Refused != "" {
		t.Fatalf("plan: %v %q", err, p.Refused)
	}
	res := ex.Apply(t.Context(), p)
	if res.Outcome != write.Refused || !strings.Contains(res.Detail, "NOPERM") || !strings.Contains(res.Detail, "+xclaim") || !strings.Contains(res.Detail, `"idem-noclaim"`) {
		t.Fatalf("apply: %+v", res)
	}
	if pe := pendingOf(t, r.c, testStream, ids[0]); pe.Consumer != worker || pe.RetryCount != 1 {
		t.Fatalf("the entry changed: %+v", pe)
	}
}

// The session's policy refuses entry writes as it does record writes.
func TestEntryPolicy(t *testing.T) {
	r := sharedRig(t)
	ids := seedPending(t, r.c, testStream, 1)
	for _, pol := range []*Policy{{Writes: false}, {Writes: true, Protected: true, Profile: "prod"}} {
		r.ex.Policy = pol
		res := r.apply(r.planEntry(EntryRequest{Kind: write.KindAck, ID: ids[0]}))
		if res.Outcome != write.Refused || (res.Detail != ErrReadOnly.Error() && res.Detail != ErrNeedsProfileName.Error()) {
			t.Fatalf("%+v: %+v", pol, res)
		}
	}
	if pendingOf(t, r.c, testStream, ids[0]) == nil {
		t.Fatal("acknowledged under a policy that refuses writes")
	}
}

// In a cluster the dead-letter stream must share the stream's slot: the
// plan is refused, before anything is read, naming the fix.
func TestEntryDeadLetterCrossSlot(t *testing.T) {
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{"127.0.0.1:1"}})
	defer cc.Close()
	ex := &Executor{Client: cc}
	p, err := ex.PlanEntry(t.Context(), EntryRequest{Kind: write.KindDeadLetter, Stream: "orders", Group: "g", ID: "1-1", DeadLetter: "orders:dlq", Reason: "x"})
	if err != nil || p.Outcome != write.Refused || !strings.Contains(p.Refused, `dead_letter: "{orders}:dlq" for stream "orders"`) {
		t.Fatalf("%v %q", err, p.Refused)
	}
	if keySlot("foo") != 12182 || keySlot("{user1000}.following") != keySlot("user1000") || keySlot("{orders}:dlq") != keySlot("orders") {
		t.Fatal("keySlot disagrees with the cluster's")
	}
	if _, err := ex.PlanEntry(t.Context(), EntryRequest{Kind: write.KindAck, Stream: "s", Group: "g", ID: "nope", Reason: "x"}); err == nil || errors.Is(err, nil) {
		t.Fatalf("a bad id planned: %v", err)
	}
}
