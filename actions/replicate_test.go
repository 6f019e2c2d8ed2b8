package actions

import (
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/idemctl/idemctl/actions/audit"
	"github.com/idemctl/idemctl/actions/write"
	"github.com/idemctl/idemctl/internal/appsim"
	"github.com/idemctl/idemctl/internal/testkit/inspecttest"
	"github.com/idemctl/idemctl/internal/testkit/redistest"
)

// A bulk write on a primary with a replica: each batch waits (WAIT, on the
// connection that wrote) until the replica has it, and every result and
// outcome line says so; once the replica stops answering, each write is
// applied but reported not replicated, with why — never "applied" alone.
func TestWritesWaitForTheReplica(t *testing.T) {
	primary, replica := redistest.OwnWithReplica(t)
	r := newRig(t, primary)
	plans := r.reservePlans("repl", 150, Request{Kind: write.KindFail})
	for _, res := range r.ex.ApplyAll(t.Context(), plans, 0, nil) {
		if res.Outcome != write.Applied || res.Replication == nil || res.Wanted != 1 || res.Acked != 1 || res.Unreplicated() {
			t.Fatalf("with the replica up: %+v %+v", res, res.Replication)
		}
	}
	rc := replica.Client(0)
	defer rc.Close()
	for _, p := range plans {
		if st := rc.HGet(t.Context(), p.Key, "state").Val(); st != "FAILED" {
			t.Fatalf("acknowledged, yet the replica has %s as %q", p.Key, st)
		}
	}

	// The replica stops (its process frozen): the primary still counts it
	// connected, so the run waits for it, and is told no.
	if err := syscall.Kill(replica.Pid(), syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	defer syscall.Kill(replica.Pid(), syscall.SIGCONT)
	r.ex.Durability = Durability{Timeout: 300 * time.Millisecond}
	lost := r.reservePlans("lost", 70, Request{Kind: write.KindFail}) // two batches: each waits
	start := time.Now()
	rs := r.ex.ApplyAll(t.Context(), lost, 0, nil)
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("two waits of 300ms took %s", took)
	}
	for _, res := range rs {
		if res.Outcome != write.Applied || !res.Unreplicated() || res.Acked != 0 || !strings.Contains(res.Note, "0 of 1 replicas acknowledged within 300ms") {
			t.Fatalf("with the replica frozen: %+v %+v", res, res.Replication)
		}
	}
	if sum := Summary(rs); sum[NotReplicated] != len(lost) || !strings.Contains(sum.String(), "70 applied (70 not replicated)") {
		t.Fatalf("summary %v: %s", sum, sum)
	}
	unreplicated := 0
	for _, e := range r.entries() {
		if e.Phase == audit.PhaseOutcome && strings.Contains(e.Key, "-lost-") {
			if e.Replication == nil || !e.NotReplicated || e.Acked != 0 || e.Wanted != 1 {
				t.Fatalf("outcome line of %s: %+v", e.Key, e.Replication)
			}
			unreplicated++
		}
	}
	if unreplicated != len(lost) {
		t.Fatalf("%d outcome lines say not replicated, want %d", unreplicated, len(lost))
	}

	// More replicas asked for than the primary has: never met.
	syscall.Kill(replica.Pid(), syscall.SIGCONT)
	r.ex.Durability = Durability{MinReplicas: 2, Timeout: 200 * time.Millisecond}
	res := r.ex.Apply(t.Context(), r.reservePlans("two", 1, Request{Kind: write.KindFail})[0])
	if !res.Unreplicated() || res.Acked != 1 || !strings.Contains(res.Note, "1 of 2 replicas") {
		t.Fatalf("two replicas wanted, one there: %+v", res.Replication)
	}
	// --min-replicas 0: nothing waited for, and said so.
	r.ex.Durability = Durability{NoWait: true}
	res = r.ex.Apply(t.Context(), r.reservePlans("nowait", 1, Request{Kind: write.KindFail})[0])
	if res.Unreplicated() || res.Wanted != 0 || !strings.Contains(res.Note, "not waited for") {
		t.Fatalf("no wait: %+v", res.Replication)
	}
}

// A primary with no replica: no WAIT is sent, and the result says a
// failover would lose nothing it has, and protect nothing.
func TestNoReplicaNothingToWaitFor(t *testing.T) {
	r := sharedRig(t)
	plan := r.reservePlans("alone", 1, Request{Kind: write.KindFail})[0]
	waits := func() string { return infoField(r.c.Info(t.Context(), "commandstats").Val(), "cmdstat_wait") }
	before := waits()
	res := r.ex.Apply(t.Context(), plan)
	if res.Outcome != write.Applied || res.Replication == nil || res.Unreplicated() || res.Wanted != 0 || res.Note != NoReplicaNote {
		t.Fatalf("%+v %+v", res, res.Replication)
	}
	if after := waits(); after != before {
		t.Fatalf("WAIT was sent to a primary without replicas: %q, then %q", before, after)
	}
}

// --require-fsync waits for the AOF fsync too (WAITAOF): on a server that
// keeps an AOF and knows the command (Redis and Valkey 7.2 on), the result
// says it was fsynced; on an older one, the write is applied and said
// not confirmed, naming why.
func TestRequireFsync(t *testing.T) {
	srv := redistest.Own(t, "--appendonly", "yes", "--appendfsync", "everysec")
	r := newRig(t, srv)
	r.ex.Durability = Durability{RequireFsync: true, Timeout: 2 * time.Second}
	res := r.ex.Apply(t.Context(), r.reservePlans("fsync", 1, Request{Kind: write.KindFail})[0])
	if res.Outcome != write.Applied || res.Replication == nil {
		t.Fatalf("%+v", res)
	}
	ver := infoField(r.c.Info(t.Context(), "server").Val(), "redis_version") // Valkey reports the Redis version it is compatible with
	var major, minor int
	fmt.Sscanf(ver, "%d.%d", &major, &minor)
	if major > 7 || major == 7 && minor >= 2 {
		if res.Unreplicated() || res.Fsynced == nil || res.Fsynced.Local != 1 {
			t.Fatalf("redis_version %s: %+v %+v", ver, res.Replication, res.Fsynced)
		}
		return
	}
	if !res.Unreplicated() || !strings.Contains(res.Note, "WAITAOF is not known to this server") {
		t.Fatalf("redis_version %s: %+v", ver, res.Replication)
	}
}

// In a cluster each shard's primary is waited on for its own writes: with
// one shard's replica frozen, only that shard's writes are reported not
// replicated.
func TestClusterWaitsPerShard(t *testing.T) {
	cl := redistest.StartCluster(t, 3, 1)
	redistest.WaitClusterReplicasSynced(t, cl, time.Minute) // a replica still in its first sync acknowledges nothing
	cc := cl.Client()
	defer cc.Close()
	ctx := t.Context()
	// 2s, not less: on a loaded machine a live replica's acknowledgement
	// can take longer than a few hundred milliseconds.
	ex, err := NewExecutor(Setup{Client: cc, Policy: &Policy{Writes: true}, AuditPath: auditPath(t),
		Durability: Durability{Timeout: 2 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	defer ex.Close()
	ks := inspecttest.Keyspace(t, "atlasmart")
	plan := func(tag string) ([]*Plan, map[string]string) {
		var plans []*Plan
		shard := map[string]string{} // key → its primary
		for i := range 30 {
			key := fmt.Sprintf("%s-%s-%02d", atlasKey, tag, i)
			if _, err := appsim.Reserve.Run(ctx, cc, []string{key}, fp(key), 600).StringSlice(); err != nil {
				t.Fatal(err)
			}
			p, err := ex.Plan(ctx, Request{Kind: write.KindFail, Keyspace: ks, Key: key, Reason: "shards"})
			if err != nil {
				t.Fatal(err)
			}
			n, err := cc.MasterForKey(ctx, key)
			if err != nil {
				t.Fatal(err)
			}
			plans, shard[key] = append(plans, p), n.Options().Addr
		}
		return plans, shard
	}
	plans, _ := plan("up")
	for _, res := range ex.ApplyAll(ctx, plans, 0, nil) {
		if res.Outcome != write.Applied || res.Wanted != 1 || res.Acked != 1 || res.Unreplicated() {
			t.Fatalf("every replica up: %+v %+v", res, res.Replication)
		}
	}
	// Freeze the replica of the first key's shard.
	plans, shard := plan("frozen")
	victim := shard[plans[0].Key]
	info := cl.Node(victim).Client(0).Info(ctx, "replication").Val()
	var ip string
	var port int
	fmt.Sscanf(strings.ReplaceAll(infoField(info, "slave0"), ",", " "), "ip=%s port=%d", &ip, &port)
	replica := cl.Node(fmt.Sprintf("127.0.0.1:%d", port))
	if replica == nil {
		t.Fatalf("no replica of %s in: %s", victim, infoField(info, "slave0"))
	}
	syscall.Kill(replica.Pid(), syscall.SIGSTOP)
	defer syscall.Kill(replica.Pid(), syscall.SIGCONT)
	short, kept := 0, 0
	for _, res := range ex.ApplyAll(ctx, plans, 0, nil) {
		switch {
		case res.Outcome != write.Applied:
			t.Fatalf("%+v", res)
		case shard[res.Key] == victim && res.Unreplicated():
			short++
		case shard[res.Key] != victim && !res.Unreplicated() && res.Acked == 1:
			kept++
		default:
			t.Fatalf("%s (shard %s, frozen %s): %+v", res.Key, shard[res.Key], victim, res.Replication)
		}
	}
	if short == 0 || kept == 0 {
		t.Fatalf("%d not replicated on the frozen shard, %d replicated elsewhere", short, kept)
	}
}
