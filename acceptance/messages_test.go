package acceptance

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/idemctl/idemctl/internal/appsim"
	"github.com/idemctl/idemctl/internal/testkit/clitest"
	"github.com/idemctl/idemctl/internal/testkit/consumerapp"
	"github.com/idemctl/idemctl/internal/testkit/pgtest"
	"github.com/idemctl/idemctl/internal/testkit/redistest"
)

// messagesConfig is a stream keyspace over pay:* whose verify hook is the
// example verify-payment-event, asking pg's effects table.
func messagesConfig(t *testing.T, url string, pg *pgtest.Server) string {
	t.Helper()
	hook, err := filepath.Abs(filepath.Join(clitest.RepoRoot, "examples", "verify-payment-event"))
	if err != nil {
		t.Fatal(err)
	}
	var env []string
	for _, e := range pg.Env() {
		k, v, _ := strings.Cut(e, "=")
		env = append(env, fmt.Sprintf("%s: %q", k, v))
	}
	return clitest.WriteConfig(t, fmt.Sprintf(`profiles:
  test: {url: %q}
default_profile: test
keyspaces:
  - name: payments
    kind: stream
    match: "pay:*"
    processing_timeout: 1s
    max_deliveries: 5
    dead_letter: "dlq:{stream}"
    verify:
      command: [%q, "{event_id}"]
      env: {%s}
  - name: billing-dedupe
    kind: ledger
    preset: zset-window
    match: "dedupe:*"
    window: 24h
`, url, hook, strings.Join(env, ", ")))
}

// stalePending lists the stale pending entries idemctl streams reports
// with the flags where, as "id consumer", sorted.
func stalePending(t *testing.T, where ...string) []string {
	t.Helper()
	r := clitest.Run(t, nil, append([]string{"streams", "--pending", "--stale", "-o", "json"}, where...)...)
	r.MustCode(t, 0)
	var out struct {
		Keyspaces []struct {
			Streams []struct {
				Groups []struct {
					Entries []struct{ ID, Consumer string }
				}
			}
		}
	}
	if err := json.Unmarshal([]byte(r.Stdout), &out); err != nil {
		t.Fatalf("%v\n%s", err, r.Stdout)
	}
	var got []string
	for _, k := range out.Keyspaces {
		for _, s := range k.Streams {
			for _, g := range s.Groups {
				for _, e := range g.Entries {
					got = append(got, e.ID+" "+e.Consumer)
				}
			}
		}
	}
	sort.Strings(got)
	return got
}

// The source lesson's message half, end to end: consumer processes of a
// payments stream die by kill -9 mid-message, two before the effect and two
// after it; a poison message cycles through an XAUTOCLAIM loop. idemctl
// finds exactly the crashed entries stale and the poison one poison,
// dead-letters the poison once, and triage acks the two whose effect
// happened and retries the two whose effect did not; the recovery consumer
// processes those once. PostgreSQL's effects table proves no event took
// effect twice.
func TestMessagesCrashedConsumersRecoveredOnce(t *testing.T) {
	srv, rc := redistest.OwnClient(t)
	pg := pgtest.Own(t)
	ctx := t.Context()
	cfg := messagesConfig(t, srv.URL(0), pg)
	const stream, poisonStream = "pay:captured", "pay:refunds"
	for _, s := range []string{stream, poisonStream} {
		if err := rc.XGroupCreateMkStream(ctx, s, "billing", "$").Err(); err != nil {
			t.Fatal(err)
		}
	}
	var events []appsim.PaymentEvent
	for i := 1; i <= 40; i++ {
		events = append(events, appsim.PaymentEvent{ID: fmt.Sprintf("evt-%02d", i), Amount: int64(100 * i)})
	}
	ids, err := appsim.Publish(ctx, rc, stream, events)
	if err != nil {
		t.Fatal(err)
	}
	app := func(consumer, s string, cfg appsim.ConsumerConfig) consumerapp.Options {
		cfg.Stream, cfg.Group, cfg.Consumer, cfg.Ledger = s, "billing", consumer, "dedupe:billing"
		return consumerapp.Options{Addr: srv.Addr, DSN: pg.DSN(), Config: cfg}
	}

	// Four workers die, each at its event; the fifth drains the rest.
	crashes := []struct {
		event  string
		before bool
	}{{"evt-05", true}, {"evt-12", false}, {"evt-20", true}, {"evt-27", false}}
	var want []string
	for i, c := range crashes {
		cc := appsim.ConsumerConfig{CrashAfterEffect: []string{c.event}}
		if c.before {
			cc = appsim.ConsumerConfig{CrashBeforeEffect: []string{c.event}}
		}
		name := fmt.Sprintf("worker-%d", i+1)
		if !consumerapp.Run(t, app(name, stream, cc), time.Minute) {
			t.Fatalf("%s did not crash at %s", name, c.event)
		}
		var n int
		fmt.Sscanf(c.event, "evt-%d", &n)
		want = append(want, ids[n-1]+" "+name)
	}
	if consumerapp.Run(t, app("worker-5", stream, appsim.ConsumerConfig{Idle: 300 * time.Millisecond}), time.Minute) {
		t.Fatal("worker-5 crashed")
	}
	// A poison refund, redelivered by the refund worker's XAUTOCLAIM loop.
	if _, err := appsim.Publish(ctx, rc, poisonStream, []appsim.PaymentEvent{{ID: "evt-poison", Poison: true}}); err != nil {
		t.Fatal(err)
	}
	consumerapp.Run(t, app("refunds-1", poisonStream, appsim.ConsumerConfig{AutoClaimIdle: 20 * time.Millisecond, Idle: 1500 * time.Millisecond}), time.Minute)

	// The poison one first: found as poison, dead-lettered once.
	base := []string{"--config", cfg, "--write", "--yes", "--audit-log", filepath.Join(t.TempDir(), "audit.log")}
	r := clitest.Run(t, nil, append([]string{"streams", "dead-letter", "--poison", "--reason", "poison refund"}, base...)...)
	r.MustCode(t, 0)
	dl := rc.XRange(ctx, "dlq:"+poisonStream, "-", "+").Val()
	if len(dl) != 1 || dl[0].Values["event_id"] != "evt-poison" || rc.XPending(ctx, poisonStream, "billing").Val().Count != 0 {
		t.Fatalf("dead letters %+v\n%s%s", dl, r.Stdout, r.Stderr)
	}

	time.Sleep(1100 * time.Millisecond) // past the keyspace's 1s processing_timeout
	got := stalePending(t, "--config", cfg)
	sort.Strings(want)
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("stale pending entries:\n got %v\nwant %v (the crashed ones)", got, want)
	}

	r = clitest.Run(t, nil, append([]string{"streams", "triage", "--reason", "workers killed"}, base...)...)
	r.MustCode(t, 0)
	applied, retried := strings.Count(r.Stdout, "applied     "), 0
	for _, c := range crashes {
		if c.before {
			retried++
		}
	}
	if !strings.Contains(r.Stderr, "4 stale entries judged: 4 to acknowledge or retry, 0 left alone") || applied != 4 {
		t.Fatalf("triage:\n%s%s", r.Stdout, r.Stderr)
	}
	if consumerapp.Run(t, app("idemctl-recovery", stream, appsim.ConsumerConfig{Idle: 300 * time.Millisecond}), time.Minute) {
		t.Fatal("the recovery consumer crashed")
	}

	var rows, distinct int
	if err := pg.DB().QueryRowContext(ctx, `SELECT count(*), count(DISTINCT event_id) FROM effects`).Scan(&rows, &distinct); err != nil {
		t.Fatal(err)
	}
	pending := rc.XPending(ctx, stream, "billing").Val().Count
	if rows != 40 || distinct != 40 || pending != 0 {
		t.Fatalf("effects: %d rows for %d events (want 40 and 40); %d still pending", rows, distinct, pending)
	}
	if n := len(stalePending(t, "--config", cfg)); n != 0 {
		t.Fatalf("%d stale entries left", n)
	}
	r = clitest.Run(t, nil, "streams", "--config", cfg, "--fail-on-stale", "--fail-on-poison")
	r.MustCode(t, 0)
	trimmed, untrimmed := ledgerTrimFound(t, cfg, rc)
	t.Logf("ledger: doctor's ledger-trim findings: %d with the trim job running, %d with it stopped for 3 days", trimmed, untrimmed)
	t.Logf("messages: %d consumers crashed mid-message, %d stale pending entries found, %d acknowledged as done, %d retried and processed by the recovery consumer, %d poison dead-lettered; effects duplicated: %d",
		len(crashes), len(got), len(crashes)-retried, retried, len(dl), rows-distinct)
}

// The documented roles with the page's stream and ledger additions: the
// inspector reads streams and ledgers without one refusal and may not ack;
// the operator retries, acks and dead-letters.
func TestMessagesACLRoles(t *testing.T) {
	srv := redistest.Shared(t)
	ctx := t.Context()
	admin := srv.Client(0)
	defer admin.Close()
	patterns := []string{"~pay:*", "~dlq:*", "~dedupe:*"}
	inspector := append(append(secReadmeACL(t, "idemctl-inspector", secProposedInspectorACL), patterns...), secReadmeRights(t, "inspector-messages")...)
	operator := append(append(secReadmeACL(t, "idemctl-operator", secProposedOperatorACL), patterns...), secReadmeRights(t, "operator-messages")...)
	secSetUser(t, admin, inspector, "insp-"+secPW)
	secSetUser(t, admin, operator, "oper-"+secPW)
	env := map[string]string{"INSP_PW": "insp-" + secPW, "OPER_PW": "oper-" + secPW}
	asInspector := []string{"--url", "redis://idemctl-inspector@" + srv.Addr + "/0", "--password-env", "INSP_PW"}
	asOperator := []string{"--url", "redis://idemctl-operator@" + srv.Addr + "/0", "--password-env", "OPER_PW"}

	stream := "pay:acl:" + t.Name()
	admin.XGroupCreateMkStream(ctx, stream, "billing", "$")
	var ids []string
	for i := range 4 {
		ids = append(ids, admin.XAdd(ctx, &redis.XAddArgs{Stream: stream, Values: []any{"event_id", fmt.Sprint("evt-", i)}}).Val())
	}
	admin.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "billing", Consumer: "w1", Streams: []string{stream, ">"}, Count: 10})
	admin.ZAdd(ctx, "dedupe:acl", redis.Z{Score: float64(time.Now().UnixMilli()), Member: "evt-0"})
	admin.Do(ctx, "ACL", "LOG", "RESET")

	for _, args := range [][]string{
		{"streams", "--match", "pay:acl:*", "-o", "json"},
		{"streams", "--match", "pay:acl:*", "--pending", "-o", "json"},
		{"streams", "--stream", stream, "--entry", ids[0], "-o", "json"},
		{"ledgers", "--match", "dedupe:acl*", "--preset", "zset-window", "-o", "json"},
	} {
		r := clitest.Run(t, env, append(args, asInspector...)...)
		r.MustCode(t, 0)
	}
	if denied := secACLDenials(t, admin, "idemctl-inspector"); len(denied) > 0 {
		t.Fatalf("the documented inspector rights for streams and ledgers lack some idemctl uses (ACL LOG): %v", denied)
	}
	write := []string{"--stream", stream, "--group", "billing", "--write", "--yes", "--reason", "acl test", "--audit-log", filepath.Join(t.TempDir(), "audit.log")}
	r := clitest.Run(t, env, append(append([]string{"streams", "ack", ids[0]}, write...), asInspector...)...)
	r.MustCode(t, 4)
	if !strings.Contains(r.Stderr+r.Stdout, "NOPERM") {
		t.Errorf("the inspector's ack should be refused naming NOPERM:\n%s%s", r.Stdout, r.Stderr)
	}
	if n := admin.XPending(ctx, stream, "billing").Val().Count; n != 4 {
		t.Fatalf("the inspector's ack wrote: %d pending", n)
	}
	admin.Do(ctx, "ACL", "LOG", "RESET")
	for _, c := range [][]string{{"streams", "ack", ids[0]}, {"streams", "retry", ids[1]}, {"streams", "dead-letter", "--dead-letter", "dlq:acl", ids[2]}} {
		r := clitest.Run(t, env, append(append(c, write...), asOperator...)...)
		r.MustCode(t, 0)
	}
	if denied := secACLDenials(t, admin, "idemctl-operator"); len(denied) > 0 {
		t.Fatalf("the documented operator rights for streams lack some idemctl uses (ACL LOG): %v", denied)
	}
	if n := admin.XLen(ctx, "dlq:acl").Val(); n != 1 {
		t.Fatalf("dead-letter stream holds %d", n)
	}
}

// ledgerTrimFound runs doctor on the consumers' dedupe ledger twice: with
// its trim job run over entries three days old (none past the window is
// left), and with the trim job stopped (they stay). It returns the keys
// doctor's ledger-trim rule names each time.
func ledgerTrimFound(t *testing.T, cfg string, rc *redis.Client) (running, stopped int) {
	t.Helper()
	ctx := t.Context()
	backdate := func() {
		now := rc.Time(ctx).Val()
		for i := range 50 {
			rc.ZAdd(ctx, "dedupe:billing", redis.Z{Score: float64(now.Add(-72 * time.Hour).UnixMilli()), Member: fmt.Sprint("evt-old-", i)})
		}
	}
	found := func() int {
		r := clitest.Run(t, nil, "doctor", "--config", cfg, "-o", "json")
		var rep struct {
			Findings []struct {
				Rule     string
				Keyspace string
				Evidence []string
			}
		}
		if err := json.Unmarshal([]byte(r.Stdout), &rep); err != nil {
			t.Fatalf("doctor: %v\n%s%s", err, r.Stdout, r.Stderr)
		}
		for _, f := range rep.Findings {
			if f.Rule == "ledger-trim" && f.Keyspace == "billing-dedupe" {
				if !strings.Contains(strings.Join(f.Evidence, " "), "dedupe:billing") {
					t.Errorf("ledger-trim's evidence does not name the ledger: %v", f.Evidence)
				}
				return 1
			}
		}
		return 0
	}
	backdate()
	if n, err := appsim.TrimLedger(ctx, rc, "dedupe:billing", 24*time.Hour); err != nil || n != 50 {
		t.Fatalf("the trim job removed %d: %v", n, err)
	}
	running = found()
	backdate()
	stopped = found()
	if running != 0 || stopped != 1 {
		t.Fatalf("doctor's ledger-trim: %d with the trim job running (want 0), %d with it stopped (want 1)", running, stopped)
	}
	return running, stopped
}

// On a 3-primary cluster: streams on every shard are found, their stale
// entries retried on the node that holds each, a poison entry dead-lettered
// to a stream sharing its hash tag, and one in another slot refused with
// the fix — nothing written for it.
func TestMessagesOnCluster(t *testing.T) {
	cl := redistest.StartCluster(t, 3, 0)
	ctx := t.Context()
	cc := cl.Client()
	defer cc.Close()
	streams := []string{"{pay-a}:captured", "{pay-b}:captured", "{pay-c}:captured", "{pay-d}:captured"}
	stale := map[string]string{}
	for _, s := range streams {
		cc.XGroupCreateMkStream(ctx, s, "billing", "$")
		id := cc.XAdd(ctx, &redis.XAddArgs{Stream: s, Values: []any{"event_id", s}}).Val()
		cc.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "billing", Consumer: "w1", Streams: []string{s, ">"}, Count: 1})
		cc.Do(ctx, "XCLAIM", s, "billing", "w1", 0, id, "IDLE", 600000, "RETRYCOUNT", 9, "JUSTID")
		stale[s] = id
	}
	holding := 0
	for _, n := range cl.Nodes {
		nc := n.Client(0)
		if nc.DBSize(ctx).Val() > 0 {
			holding++
		}
		nc.Close()
	}
	if holding < 2 {
		t.Fatalf("the streams landed on %d node(s): the test needs them spread", holding)
	}
	base := []string{"--cluster", "--url", "redis://" + cl.Nodes[0].Addr, "--addrs", cl.Nodes[1].Addr, "--match", "{pay-*}:captured"}
	audit := []string{"--write", "--yes", "--audit-log", filepath.Join(t.TempDir(), "audit.log")}

	if got := stalePending(t, base...); len(got) != 4 {
		t.Fatalf("stale entries found on the cluster: %v, want 4", got)
	}
	r := clitest.Run(t, nil, append(append([]string{"streams", "dead-letter", "--stream", streams[0], "--group", "billing",
		"--dead-letter", "{pay-a}:dlq", "--reason", "poison", stale[streams[0]]}, audit...), base...)...)
	r.MustCode(t, 0)
	if n := cc.XLen(ctx, "{pay-a}:dlq").Val(); n != 1 {
		t.Fatalf("dead-letter stream holds %d\n%s%s", n, r.Stdout, r.Stderr)
	}
	r = clitest.Run(t, nil, append(append([]string{"streams", "dead-letter", "--stream", streams[1], "--group", "billing",
		"--dead-letter", "dlq:elsewhere", "--reason", "poison", stale[streams[1]]}, audit...), base...)...)
	r.MustCode(t, 4)
	if !strings.Contains(r.Stderr, "hash tag") || cc.XPending(ctx, streams[1], "billing").Val().Count != 1 {
		t.Fatalf("a dead-letter stream in another slot should be refused naming the fix:\n%s%s", r.Stdout, r.Stderr)
	}
	r = clitest.Run(t, nil, append(append([]string{"streams", "retry", "--stale", "--reason", "workers lost"}, audit...), base...)...)
	r.MustCode(t, 0)
	for _, s := range streams[1:] {
		p := cc.XPendingExt(ctx, &redis.XPendingExtArgs{Stream: s, Group: "billing", Start: "-", End: "+", Count: 10}).Val()
		if len(p) != 1 || p[0].Consumer != "idemctl-recovery" {
			t.Errorf("%s after retry: %+v", s, p)
		}
	}
}
