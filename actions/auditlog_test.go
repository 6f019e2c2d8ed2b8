package actions

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/idemctl/idemctl/actions/audit"
	"github.com/idemctl/idemctl/actions/write"
	"github.com/idemctl/idemctl/internal/testkit/inspecttest"
	"github.com/idemctl/idemctl/internal/testkit/redistest"
)

// Large values and payloads stay out of the log: recorded by length and
// SHA-256, the intent marked not undoable with the reason. A processing
// hash with three 60,000-character fields of '<' gave a 2 MB line; an
// expire --ttl 0 of a succeeded record wrote its response body twice.
func TestAuditValuesBounded(t *testing.T) {
	srv := redistest.Shared(t)
	r := newRig(t, srv)
	ctx := t.Context()
	ks := inspecttest.Keyspace(t, "atlasmart")
	lt := strings.Repeat("<", 60_000)
	r.reserveAtlas(atlasKey, fp("body-1"))
	if err := r.c.HSet(ctx, atlasKey, "note1", lt, "note2", lt, "note3", lt).Err(); err != nil {
		t.Fatal(err)
	}
	if res := r.apply(r.plan(Request{Kind: write.KindFail, Keyspace: ks, Key: atlasKey})); res.Outcome != write.Applied {
		t.Fatalf("fail: %+v", res)
	}
	in, _ := r.lastWrite(atlasKey, write.Applied)
	d, ok := in.Before.Omitted["note1"]
	if !ok || d.Len != 60_000 || d.SHA256 != audit.Digest(lt, "").SHA256 || in.Before.Fields["note1"] != "" {
		t.Fatalf("a 60,000-byte value is not recorded by length and digest: %+v", in.Before.Omitted)
	}
	if in.Undoable == nil || *in.Undoable || !strings.Contains(in.UndoNote, "note1 (60000 bytes)") {
		t.Fatalf("intent with values left out must say it is not undoable: %v %q", in.Undoable, in.UndoNote)
	}

	// A multi-megabyte record: three 1 MB fields and a 2 MB response.
	key4 := atlasKey + "-4"
	mega := strings.Repeat("<", 1<<20)
	r.reserveAtlas(key4, fp("body-4"))
	if err := r.c.HSet(ctx, key4, "note1", mega, "note2", mega, "note3", mega, "response", mega+mega).Err(); err != nil {
		t.Fatal(err)
	}
	if res := r.apply(r.plan(Request{Kind: write.KindFail, Keyspace: ks, Key: key4})); res.Outcome != write.Applied {
		t.Fatalf("fail on a multi-megabyte record: %+v", res)
	}
	in4, _ := r.lastWrite(key4, write.Applied)
	if d := in4.Before.Omitted["response"]; d.Len != 2<<20 || *in4.Undoable {
		t.Fatalf("multi-megabyte record: omitted %+v, undoable %v", in4.Before.Omitted, *in4.Undoable)
	}

	// A succeeded record's body (personal data) never reaches the log.
	key2 := atlasKey + "-2"
	body := `{"customer":"Jane Roe","card_last4":"4242","pad":"` + strings.Repeat("x", 100) + `"}`
	r.reserveAtlas(key2, fp("body-2"))
	r.completeAtlas(key2, fp("body-2"), 201, body)
	if res := r.apply(r.plan(Request{Kind: write.KindExpire, Keyspace: ks, Key: key2, TTL: TTL{Mode: TTLSet}})); res.Outcome != write.Applied {
		t.Fatalf("expire --ttl 0: %+v", res)
	}
	in2, _ := r.lastWrite(key2, write.Applied)
	if in2.Before.Omitted["response"].Why != audit.WhyPayload || *in2.Undoable {
		t.Fatalf("response body not left out as a payload: %+v", in2.Before)
	}
	raw, _ := os.ReadFile(r.audit)
	if bytes.Contains(raw, []byte("Jane Roe")) || bytes.Contains(raw, []byte(`\u003c\u003c`)) {
		t.Fatal("a payload or a long value was written into the audit log")
	}
	for i, l := range bytes.Split(raw, []byte{'\n'}) {
		if len(l) > 16<<10 {
			t.Fatalf("line %d is %d bytes: values are not bounded", i+1, len(l))
		}
	}

	// A profile may keep payloads (up to the cap).
	r.ex.Audit.Values = audit.Values{Payloads: true, MaxValue: 4096}
	key3 := atlasKey + "-3"
	r.reserveAtlas(key3, fp("body-3"))
	r.completeAtlas(key3, fp("body-3"), 201, body)
	if res := r.apply(r.plan(Request{Kind: write.KindExpire, Keyspace: ks, Key: key3, TTL: TTL{Mode: TTLSet, D: time.Hour}})); res.Outcome != write.Applied {
		t.Fatalf("expire: %+v", res)
	}
	in3, _ := r.lastWrite(key3, write.Applied)
	if in3.Before.Fields["response"] != body || !*in3.Undoable {
		t.Fatalf("audit_payloads: the body is kept and the intent undoable: %+v %v", in3.Before, *in3.Undoable)
	}
	// Even then, a delete of a succeeded record logs its body once: in the
	// intent, not again in the outcome.
	key5 := atlasKey + "-5"
	body5 := strings.Replace(body, "Jane Roe", "John Doe", 1)
	r.reserveAtlas(key5, fp("body-5"))
	r.completeAtlas(key5, fp("body-5"), 201, body5)
	if res := r.apply(r.plan(Request{Kind: write.KindExpire, Keyspace: ks, Key: key5, TTL: TTL{Mode: TTLSet}})); res.Outcome != write.Applied {
		t.Fatalf("expire --ttl 0: %+v", res)
	}
	raw, _ = os.ReadFile(r.audit)
	if n := bytes.Count(raw, []byte("John Doe")); n != 1 {
		t.Fatalf("expire --ttl 0 with audit_payloads logged the body %d times, want once", n)
	}
}

// An entry beyond the line limit (only a huge key can make one now) is
// refused, and so is its write.
func TestAuditEntryTooLongRefused(t *testing.T) {
	path := auditPath(t)
	a, err := audit.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	err = a.Write(t.Context(), audit.Entry{Phase: audit.PhaseIntent, Key: strings.Repeat("k", audit.MaxLine)})
	if err == nil || !strings.Contains(err.Error(), "line limit") {
		t.Fatalf("a 1 MiB key: %v", err)
	}
	if fi, _ := os.Stat(path); fi.Size() != 0 {
		t.Fatalf("something was written: %d bytes", fi.Size())
	}
}

// Group commit: a bulk run's plan, then each batch's intents together
// before its writes, and its outcomes together after (two fsyncs a batch,
// not two a write); every intent has its outcome.
func TestGroupCommitOrder(t *testing.T) {
	r := sharedRig(t)
	plans := r.reservePlans("gc", 100, Request{Kind: write.KindFail})
	for _, res := range r.ex.ApplyAll(t.Context(), plans, 0, nil) {
		if res.Outcome != write.Applied {
			t.Fatalf("%+v", res)
		}
	}
	var phases []string
	for _, e := range r.entries() {
		if e.Run != RunID(plans) {
			t.Fatalf("entry outside the run: %+v", e)
		}
		if n := len(phases); n > 0 && phases[n-1] == e.Phase {
			continue
		}
		phases = append(phases, e.Phase)
	}
	want := "plan intent outcome intent outcome" // 64 + 36
	if got := strings.Join(phases, " "); got != want {
		t.Fatalf("log phases %q, want %q", got, want)
	}
	if batchSize(50) != 2 || batchSize(1000) != 50 || batchSize(1) != 1 || batchSize(0) != maxBatch {
		t.Fatal("batch sizes: about 50 ms of the rate, 1 to 64")
	}
}

// --rate holds across batches: n writes at rate r take at least (n-1)/r,
// and an absurd rate is no error (it used to panic in NewTicker).
func TestApplyAllRate(t *testing.T) {
	r := sharedRig(t)
	plans := r.reservePlans("rate", 21, Request{Kind: write.KindExpire, TTL: TTL{Mode: TTLSet, D: time.Hour}})
	start := time.Now()
	for _, res := range r.ex.ApplyAll(t.Context(), plans[:20], 100, nil) {
		if res.Outcome != write.Applied {
			t.Fatalf("%+v", res)
		}
	}
	if d := time.Since(start); d < 190*time.Millisecond {
		t.Fatalf("20 writes at --rate 100 took %v, want ≥ 190 ms", d)
	}
	if res := r.ex.ApplyAll(t.Context(), plans[20:], 2_000_000_000, nil); res[0].Outcome != write.Applied {
		t.Fatalf("%+v", res[0])
	}
}

// Plan parts stay bounded by keys and by bytes, and cover every plan once.
func TestPlanChunks(t *testing.T) {
	var plans []*Plan
	for i := range 2500 {
		k := fmt.Sprintf("k%d", i)
		if i >= 2000 {
			k = strings.Repeat("x", 100<<10) // 100 KiB keys: one or two a part
		}
		plans = append(plans, &Plan{Request: Request{Key: k}})
	}
	n := 0
	for _, c := range planChunks(plans) {
		size := 0
		for _, p := range c {
			size += len(p.Key)
		}
		if len(c) == 0 || len(c) > planPartKeys || size > planPartBytes && len(c) > 1 {
			t.Fatalf("a part of %d keys, %d bytes", len(c), size)
		}
		n += len(c)
	}
	if n != len(plans) {
		t.Fatalf("parts hold %d of %d plans", n, len(plans))
	}
}

// reservePlans reserves n atlasmart records named by tag and plans req on
// each.
func (r *rig) reservePlans(tag string, n int, req Request) []*Plan {
	r.t.Helper()
	req.Keyspace = inspecttest.Keyspace(r.t, "atlasmart")
	var plans []*Plan
	for i := range n {
		req.Key = fmt.Sprintf("%s-%s-%03d", atlasKey, tag, i)
		r.reserveAtlas(req.Key, fp(req.Key))
		plans = append(plans, r.plan(req))
	}
	return plans
}
