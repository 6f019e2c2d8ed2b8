package verify

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/idemctl/idemctl/actions"
	"github.com/idemctl/idemctl/actions/write"
	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/internal/testkit/pgtest"
)

func testKeyspace(t *testing.T) *inspect.Keyspace {
	t.Helper()
	s, err := inspect.Preset("atlasmart")
	if err != nil {
		t.Fatal(err)
	}
	ks, err := inspect.NewKeyspace(inspect.KeyspaceSpec{Name: "orders", Schema: s})
	if err != nil {
		t.Fatal(err)
	}
	return ks
}

// record is a processing record of the atlasmart keyspace.
func record(t *testing.T, key string) *inspect.Record {
	t.Helper()
	ks := testKeyspace(t)
	groups, _ := ks.Template.Match(key)
	return &inspect.Record{Key: key, Keyspace: ks, Groups: groups, RawState: "PROCESSING", State: inspect.StateProcessing, Fingerprint: "fp1"}
}

// hook re-executes the test binary as the fake hook mode.
func hook(mode string, timeout time.Duration, args ...string) Hook {
	return Hook{Command: append([]string{os.Args[0]}, args...), Timeout: timeout, Env: []string{"VERIFY_TEST_HOOK=" + mode}}
}

func TestVerdicts(t *testing.T) {
	rec := record(t, "atlasmart:ch23:idem:alice:POST:/orders:k1")
	r := hook("done", 20*time.Second, "{idem_key}").Verify(t.Context(), rec)
	if r.Verdict != Done || r.Ref != "order-k1" || r.Status != 201 || r.Response == nil || *r.Response != `{"id":1}` || r.Detail != "found" {
		t.Fatalf("done: %+v", r)
	}
	r = hook("not_done", 20*time.Second).Verify(t.Context(), rec)
	if r.Verdict != NotDone || r.Detail != "no order" || r.Why != "" {
		t.Fatalf("not_done: %+v", r)
	}
	r = hook("unknown", 20*time.Second).Verify(t.Context(), rec)
	if r.Verdict != Unknown || !strings.Contains(r.Why, "database unreachable") {
		t.Fatalf("unknown: %+v", r)
	}
}

// Record text becomes whole arguments, never split and never through a
// shell: a key holding spaces, quotes and $(…) arrives as one argument.
func TestArgumentsAreNotInterpreted(t *testing.T) {
	key := "atlasmart:ch23:idem:al ice:POST:/orders:k'$(touch /tmp/pwned)\";x"
	rec := record(t, key)
	r := hook("args", 20*time.Second, "{principal}", "--key={idem_key}", "{key}", `{"literal":1}`, "{fingerprint}", "{state}", "{keyspace}").Verify(t.Context(), rec)
	want := "al ice|--key=k'$(touch /tmp/pwned)\";x|" + key + `|{"literal":1}|fp1|PROCESSING|orders`
	if r.Verdict != NotDone || r.Detail != want {
		t.Fatalf("got %+v\nwant detail %q", r, want)
	}
	rec.Key = "atlasmart:ch23:idem:a:POST:/o:k\x00"
	rec.Groups, _ = rec.Keyspace.Template.Match(rec.Key)
	r = hook("args", 20*time.Second, "{idem_key}").Verify(t.Context(), rec)
	if r.Verdict != Unknown || !strings.Contains(r.Why, "NUL") {
		t.Fatalf("NUL: %+v", r)
	}
}

func TestNeverOnRecordsNotProcessing(t *testing.T) {
	rec := record(t, "atlasmart:ch23:idem:alice:POST:/orders:k1")
	rec.State, rec.RawState = inspect.StateSucceeded, "SUCCEEDED"
	// a hook that would leave a mark if it ran
	mark := t.TempDir() + "/ran"
	r := Hook{Command: []string{"/bin/sh", "-c", "touch " + mark}, Timeout: time.Second}.Verify(t.Context(), rec)
	if r.Verdict != Unknown || !strings.Contains(r.Why, "not processing") {
		t.Fatalf("%+v", r)
	}
	if _, err := os.Stat(mark); err == nil {
		t.Fatal("the hook ran on a succeeded record")
	}
}

// Every misbehaving hook is unknown with a reason in the operator's terms,
// and none blocks past its timeout.
func TestMisbehavingHooksAreUnknown(t *testing.T) {
	rec := record(t, "atlasmart:ch23:idem:alice:POST:/orders:k1")
	cases := []struct{ mode, why string }{
		{"hang", "timed out after 700ms and was killed"},
		{"crash", "killed by signal 9 (killed)"},
		{"exit3", `exited with status 3: psql: connection refused\x1b[31m`},
		{"garbage", "did not print JSON: unexpected 'O' at byte 1"},
		{"two", "more than one JSON object"},
		{"huge", "printed more than 64KiB"},
		{"control", "did not print JSON: unexpected control character U+001B at byte 1"},
		{"control-ref", `"ref" holds control or invisible characters`},
		{"array", "not an object"},
		{"bad-verdict", `"verdict" is "yes"`},
		{"bad-status", `"status" is "two hundred"`},
		{"not-utf8", "not UTF-8"},
		{"empty", "printed nothing"},
		{"truncated", "ends inside a JSON value"},
	}
	for _, c := range cases {
		t.Run(c.mode, func(t *testing.T) {
			// A generous timeout for hooks that end on their own (the
			// re-executed test binary starts slowly under -race on a busy
			// machine); a short one where the timeout is the point.
			timeout := 20 * time.Second
			if c.mode == "hang" {
				timeout = 700 * time.Millisecond
			}
			start := time.Now()
			r := hook(c.mode, timeout).Verify(t.Context(), rec)
			took := time.Since(start)
			if r.Verdict != Unknown || !strings.Contains(r.Why, c.why) {
				t.Fatalf("got %s (%q), want unknown with %q", r.Verdict, r.Why, c.why)
			}
			if took > timeout+drainLimit+2*time.Second {
				t.Fatalf("took %s, past the %s timeout", took, timeout)
			}
			if strings.ContainsAny(r.Why, "\x1b\x07\n") {
				t.Fatalf("reason not sanitized: %q", r.Why)
			}
		})
	}
}

// A hanging hook's whole process group is killed: its children do not
// outlive the run.
func TestTimeoutKillsProcessGroup(t *testing.T) {
	rec := record(t, "atlasmart:ch23:idem:alice:POST:/orders:k1")
	pidFile := t.TempDir() + "/pid"
	// long enough for the re-executed binary to start its child and say
	// its pid, even under -race
	r := hook("hang-child-wait", 3*time.Second, pidFile).Verify(t.Context(), rec)
	if r.Verdict != Unknown || !strings.Contains(r.Why, "timed out") {
		t.Fatalf("%+v", r)
	}
	if r.Took > 5*time.Second {
		t.Fatalf("took %s", r.Took)
	}
	waitGone(t, readPid(t, pidFile))
}

// A hook that exits leaving a child holding its output: the child is
// killed with the group and the verdict stands, at once; a child that
// escaped the group (a session of its own) makes it unknown, after the
// drain limit, not never.
func TestHookLeavingChildren(t *testing.T) {
	rec := record(t, "atlasmart:ch23:idem:alice:POST:/orders:k1")
	pidFile := t.TempDir() + "/pid"
	r := hook("hang-child", 20*time.Second, pidFile).Verify(t.Context(), rec)
	if r.Verdict != NotDone {
		t.Fatalf("%+v", r)
	}
	pid := readPid(t, pidFile)
	waitGone(t, pid)

	r = hook("escape", 20*time.Second, pidFile).Verify(t.Context(), rec)
	pid = readPid(t, pidFile)
	_ = syscall.Kill(pid, syscall.SIGKILL) // escaped: ours to clean up
	if r.Verdict != Unknown || !strings.Contains(r.Why, "outside its process group, holding its output open") || r.Took > drainLimit+3*time.Second {
		t.Fatalf("%+v", r)
	}
}

func readPid(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	if pid <= 0 {
		t.Fatalf("pid file %q", b)
	}
	return pid
}

// waitGone waits for pid to be dead (or a zombie), failing after 2s.
func waitGone(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Second)
	for alive(pid) {
		if time.Now().After(deadline) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("the hook's child %d outlived the run", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// alive: the process exists and is not a zombie (a container's init may
// never reap it).
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}

func TestVerifyAllBoundsConcurrency(t *testing.T) {
	var recs []*inspect.Record
	for i := range 8 {
		recs = append(recs, record(t, "atlasmart:ch23:idem:alice:POST:/orders:k"+strconv.Itoa(i)))
	}
	dir := t.TempDir()
	// each run records itself while it sleeps; at most 2 may overlap
	script := `n=$(ls ` + dir + ` | wc -l); touch ` + dir + `/$$; echo $n >> ` + dir + `.seen; sleep 0.2; rm ` + dir + `/$$; echo '{"verdict":"not_done"}'`
	h := Hook{Command: []string{"/bin/sh", "-c", script, "{idem_key}"}, Timeout: 5 * time.Second, Concurrency: 2}
	got := map[int]Verdict{}
	h.VerifyAll(t.Context(), recs, func(i int, r Result) { got[i] = r.Verdict })
	if len(got) != len(recs) {
		t.Fatalf("%d results for %d records", len(got), len(recs))
	}
	for i, v := range got {
		if v != NotDone {
			t.Fatalf("record %d: %s", i, v)
		}
	}
	b, _ := os.ReadFile(dir + ".seen")
	for _, line := range strings.Fields(string(b)) {
		if n, _ := strconv.Atoi(line); n >= 2 {
			t.Fatalf("a run saw %d others running: concurrency 2 not kept (%q)", n, b)
		}
	}
}

func TestVerifyAllInterrupted(t *testing.T) {
	recs := []*inspect.Record{record(t, "atlasmart:ch23:idem:a:POST:/o:k1"), record(t, "atlasmart:ch23:idem:a:POST:/o:k2")}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	n := 0
	hook("hang", time.Minute).VerifyAll(ctx, recs, func(i int, r Result) {
		n++
		if r.Verdict != Unknown || !strings.Contains(r.Why, "interrupted") {
			t.Errorf("%d: %+v", i, r)
		}
	})
	if n != 2 {
		t.Fatalf("%d results", n)
	}
}

func TestCheck(t *testing.T) {
	caps := []string{"principal", "endpoint", "idem_key"}
	for _, c := range []struct {
		h    Hook
		want string
	}{
		{Hook{Command: []string{"./v", "{idem_key}", "{key}", `{"a":1}`}}, ""},
		{Hook{}, "command is empty"},
		{Hook{Command: []string{"./{key}"}}, "cannot hold a placeholder"},
		{Hook{Command: []string{"./v", "{order}"}}, "argument 1: unknown placeholder {order} (have: {endpoint}, {fingerprint}, {idem_key}, {key}, {keyspace}, {principal}, {state})"},
		{Hook{Command: []string{"./v"}, Timeout: time.Hour}, "timeout 1h0m0s"},
		{Hook{Command: []string{"./v"}, Concurrency: 100}, "concurrency 100"},
		{Hook{Command: []string{"./v"}, Env: []string{"X"}}, `env "X"`},
	} {
		err := c.h.Check(caps)
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%v: got %v, want %q", c.h.Command, err, c.want)
		}
	}
}

func TestSegfaultingHook(t *testing.T) {
	rec := record(t, "atlasmart:ch23:idem:alice:POST:/orders:k1")
	r := Hook{Command: []string{"/bin/sh", "-c", "kill -SEGV $$"}, Timeout: 2 * time.Second}.Verify(t.Context(), rec)
	if r.Verdict != Unknown || r.Why != "the hook was killed by signal 11 (segmentation fault)" {
		t.Fatalf("%+v", r)
	}
	r = Hook{Command: []string{"/nonexistent/verify-orders"}}.Verify(t.Context(), rec)
	if r.Verdict != Unknown || r.Why != "the hook could not be started: /nonexistent/verify-orders not found" {
		t.Fatalf("%+v", r)
	}
}

// The example hook against a real PostgreSQL: done with the order's id,
// status and response; not_done without an order; a hostile key stays
// data; unknown, with the database's reason, once the server is gone.
func TestExampleVerifyOrders(t *testing.T) {
	if _, err := pgtest.Psql(); err != nil {
		t.Fatal(err)
	}
	pg := pgtest.Own(t)
	var id int64
	err := pg.DB().QueryRow(`INSERT INTO orders (principal, idem_key, amount, status, response) VALUES ('alice', 'k1', 5, 201, '{"order_id":1}') RETURNING id`).Scan(&id)
	if err != nil {
		t.Fatal(err)
	}
	script, _ := filepath.Abs("../examples/verify-orders")
	h := Hook{Command: []string{script, "{principal}", "{idem_key}"}, Timeout: 10 * time.Second, Env: pg.Env()}
	ctx := t.Context()

	r := h.Verify(ctx, record(t, "atlasmart:ch23:idem:alice:POST:/orders:k1"))
	if r.Verdict != Done || r.Ref != strconv.FormatInt(id, 10) || r.Status != 201 || r.Response == nil || *r.Response != `{"order_id":1}` || !strings.HasPrefix(r.Detail, "order 1 created ") {
		t.Fatalf("existing order: %+v", r)
	}
	r = h.Verify(ctx, record(t, "atlasmart:ch23:idem:alice:POST:/orders:k2"))
	if r.Verdict != NotDone || r.Detail != "no order for this idempotency key" {
		t.Fatalf("missing order: %+v", r)
	}
	hostile := "atlasmart:ch23:idem:alice:POST:/orders:k1' OR '1'='1'; DROP TABLE orders; --$(touch x)"
	r = h.Verify(ctx, record(t, hostile))
	if r.Verdict != NotDone {
		t.Fatalf("hostile key: %+v", r)
	}
	if err := pg.DB().QueryRow(`SELECT count(*) FROM orders`).Scan(new(int)); err != nil {
		t.Fatalf("the orders table is gone: %v", err)
	}
	if _, err := os.Stat("x"); err == nil {
		os.Remove("x")
		t.Fatal("record text reached a shell")
	}
	pg.Stop()
	r = h.Verify(ctx, record(t, "atlasmart:ch23:idem:alice:POST:/orders:k1"))
	if r.Verdict != Unknown || !strings.Contains(r.Why, "database error (psql exit 2): psql: error: connection to server at") {
		t.Fatalf("database gone: %+v", r)
	}
}

// A verdict makes one write: done → reconcile with the hook's ref, status
// and response, and the evidence for the audit log; not_done → fail;
// unknown, or done without the ref the schema records → none, with why.
func TestActionFor(t *testing.T) {
	rec := record(t, "atlasmart:ch23:idem:alice:POST:/orders:k1")
	saw := &actions.Seen{State: "PROCESSING", Fingerprint: "fp1", Version: "0123456789abcdef0123"}
	body := `{"order_id":7}`
	a := ActionFor(rec, Result{Verdict: Done, Ref: "7", Status: 201, Response: &body, Detail: "order 7", Took: 1500 * time.Millisecond}, saw, "r", "verify-orders")
	q := a.Request
	if a.Left != "" || q.Kind != write.KindReconcile || q.Ref != "7" || q.Status != 201 || q.Response != &body || q.Saw != saw || q.Reason != "r" ||
		*q.Evidence != (write.Evidence{Verdict: "done", Ref: "7", Detail: "order 7", Hook: "verify-orders", TookMs: 1500}) {
		t.Fatalf("done: %+v %+v", a, q.Evidence)
	}
	if a := ActionFor(rec, Result{Verdict: NotDone, Detail: "no order"}, saw, "r", "h"); a.Left != "" || a.Request.Kind != write.KindFail || a.Request.Evidence.Verdict != "not_done" {
		t.Fatalf("not_done: %+v", a)
	}
	if a := ActionFor(rec, Result{Verdict: Done}, saw, "r", "h"); !strings.Contains(a.Left, "done without a ref") {
		t.Fatalf("done without ref: %+v", a)
	}
	if a := ActionFor(rec, unknown("the hook timed out after 5s and was killed"), saw, "r", "h"); a.Left != "the hook timed out after 5s and was killed" {
		t.Fatalf("unknown: %+v", a)
	}
}

// A builtin source of truth is held to the hook's contract: its JSON goes
// through the same parser, so a bad answer is unknown, never trusted.
func TestBuiltinIsParsedAsAHook(t *testing.T) {
	rec := record(t, "atlasmart:ch23:idem:alice:POST:/orders:k1")
	answer := func(out string) Hook {
		return Hook{Command: []string{"builtin"}, Builtin: func(context.Context, *inspect.Record) []byte { return []byte(out) }}
	}
	if r := answer(`{"verdict":"done","ref":"ord-1"}`).Verify(t.Context(), rec); r.Verdict != Done || r.Ref != "ord-1" {
		t.Fatalf("done: %+v", r)
	}
	if r := answer(`{"verdict":"done","ref":"ord-\u001b[2J"}`).Verify(t.Context(), rec); r.Verdict != Unknown {
		t.Fatalf("a control character in ref: %+v", r)
	}
	if r := answer(``).Verify(t.Context(), rec); r.Verdict != Unknown || !strings.Contains(r.Why, "printed nothing") {
		t.Fatalf("nothing: %+v", r)
	}
}
