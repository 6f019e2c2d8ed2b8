package acceptance

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/idemctl/idemctl/cli"
	"github.com/idemctl/idemctl/internal/testkit/clitest"
	"github.com/idemctl/idemctl/internal/testkit/interop"
)

// idemctl find against the real libraries: requests made through each
// library, then find with the same request finds exactly the record the
// library wrote and says same request; a body changed in one field says
// different request (or, where the body is part of the key, not found); a
// request never made is not found; a snapshot gives the same answers.

// findReply is what find -o json says.
type findReply struct {
	Derivation struct{ Key string }
	Verdict    struct{ Line string }
	Record     json.RawMessage
}

func (r *interopRig) find(args ...string) findReply {
	r.t.Helper()
	res := clitest.Run(r.t, nil, append([]string{"find", "-o", "json", "--preset", r.il.preset}, args...)...)
	var got findReply
	// Not found exits 6 (ExitNotFound), with the verdict printed all the same.
	if res.Code == cli.ExitNotFound {
		defer func() {
			if !strings.HasPrefix(got.Verdict.Line, "not found") {
				r.t.Errorf("find %v exited %d with verdict %q", args, res.Code, got.Verdict.Line)
			}
		}()
	} else {
		res.MustCode(r.t, cli.ExitOK)
	}
	if err := json.Unmarshal([]byte(res.Stdout), &got); err != nil {
		r.t.Fatalf("find %v: %v\n%s", args, err, res.Stdout)
	}
	return got
}

func (r *interopRig) file(name string, data []byte) string {
	r.t.Helper()
	p := filepath.Join(r.t.TempDir(), name)
	if err := os.WriteFile(p, data, 0o600); err != nil {
		r.t.Fatal(err)
	}
	return p
}

// expect checks find's answer: the library's own key and the verdict.
func (r *interopRig) expect(what string, got findReply, key, verdict string) {
	r.t.Helper()
	if key != "" && got.Derivation.Key != key {
		r.t.Errorf("%s: find derived %q, the library keyed %q", what, got.Derivation.Key, key)
	}
	if !strings.HasPrefix(got.Verdict.Line, verdict) {
		r.t.Errorf("%s: verdict %q, want %q…", what, got.Verdict.Line, verdict)
	}
}

func TestFindInteropRealLibraries(t *testing.T) {
	t.Run(interop.NodeIdempotency, func(t *testing.T) {
		newInteropRig(t, interopLibs[1]).findsNodeIdempotencyRequests()
	})
	t.Run(interop.ExpressIdempotency, func(t *testing.T) {
		newInteropRig(t, interopLibs[2]).findsExpressRequests()
	})
	t.Run(interop.Powertools, func(t *testing.T) {
		newInteropRig(t, interopLibs[0]).findsPowertoolsEvents()
	})
}

// nodeRequest is the request file an engineer writes from the access log.
func (r *interopRig) nodeRequest(key, body string) string {
	return r.file(key+".json", []byte(`{"method":"POST","path":"/orders","headers":{"Idempotency-Key":"`+key+`"},"body":`+body+`}`))
}

func (r *interopRig) findsNodeIdempotencyRequests() {
	bodies := []string{`{"sku":"book-1","qty":2}`, `{"qty":1,"sku":"b","10":[1.50,{"Z":null,"a":"é"}],"2":true}`, `[{"sku":"x"}]`}
	live := []string{"--url", r.srv.URL(0)}
	var keys []string
	for i, body := range bodies {
		key := "find-node-" + string(rune('a'+i))
		rep := r.call(interop.Cmd{Key: key, Body: json.RawMessage(body), Status: 201, Response: map[string]any{"id": key}})
		if !rep.Ran || rep.RedisKey == "" {
			r.t.Fatalf("%s: %+v", key, rep)
		}
		keys = append(keys, rep.RedisKey)
		r.expect(key, r.find(append(live, "--request", r.nodeRequest(key, body))...), rep.RedisKey, "same request")
		r.expect(key+" by --key", r.find(append(live, "--key", key, "--method", "POST", "--path", "/orders")...), rep.RedisKey, "the record has a fingerprint")
	}
	changed := r.nodeRequest("find-node-a", `{"sku":"book-1","qty":3}`)
	r.expect("changed qty", r.find(append(live, "--request", changed)...), keys[0], `different request under this key: the library answers "Idempotency-Key is already used"`)
	if rep := r.call(interop.Cmd{Key: "find-node-a", Body: json.RawMessage(`{"sku":"book-1","qty":3}`)}); rep.Ran || rep.Status != 422 {
		r.t.Errorf("the library itself, on the changed body: %+v (want 422, handler not run)", rep)
	}
	// A record that expired: made with a 1 s TTL, then gone.
	r.call(interop.Cmd{Key: "find-node-expired", Body: json.RawMessage(bodies[0]), Status: 201, TTLSeconds: 1})
	time.Sleep(1200 * time.Millisecond)
	r.expect("expired", r.find(append(live, "--request", r.nodeRequest("find-node-expired", bodies[0]))...), "node-idempotency:POST:/orders:find-node-expired", "not found: never stored, or expired")
	never := r.nodeRequest("find-node-never", bodies[0])
	r.expect("never made", r.find(append(live, "--request", never)...), "node-idempotency:POST:/orders:find-node-never", "not found")
	rdb := []string{"--rdb", r.srv.Snapshot(r.t)}
	r.expect("--rdb", r.find(append(rdb, "--request", r.nodeRequest("find-node-b", bodies[1]))...), keys[1], "same request")
	r.expect("--rdb changed", r.find(append(rdb, "--request", changed)...), keys[0], "different request")
}

// ptEvent is the API Gateway event the driver sends for key and body, as
// an engineer copies it from the invocation's log.
func ptEvent(key, body string) []byte {
	k, _ := json.Marshal(key)
	b, _ := json.Marshal(body)
	return []byte(`{"httpMethod":"POST","path":"/orders","headers":{"idempotency-key":` + string(k) + `},"body":` + string(b) + `}`)
}

const ptFunction = "idemctl-interop-fn"

// ptFind runs find on a Powertools event.
func (r *interopRig) ptFind(src []string, flags []string, event []byte) findReply {
	r.t.Helper()
	args := append(append(append([]string{}, src...), "--function", ptFunction), flags...)
	return r.find(append(args, "--event", r.file("event.json", event))...)
}

func (r *interopRig) findsPowertoolsEvents() {
	live := []string{"--url", r.srv.URL(0)}
	r.ptValidated(live)
	// The whole event hashed: a changed body is another key.
	whole := interop.Cmd{Key: "find-pt-whole", Body: json.RawMessage(`{"sku":"b","qty":2,"note":"é\n"}`), JMESPath: "@", Status: 201}
	rep := r.call(whole)
	r.expect("whole event", r.ptFind(live, nil, rep.Event), rep.RedisKey, "no fingerprint stored: cannot tell (the key hashes")
	r.expect("whole event, same event rebuilt", r.ptFind(live, nil, ptEvent(whole.Key, `{"sku":"b","qty":2,"note":"é\n"}`)), rep.RedisKey, "no fingerprint")
	r.expect("whole event, qty changed", r.ptFind(live, nil, ptEvent(whole.Key, `{"sku":"b","qty":3,"note":"é\n"}`)), "", "not found")
	// A field of the JSON body: a changed qty is the same record.
	field := []string{"--event-key-jmespath", "powertools_json(body).sku"}
	sel := interop.Cmd{Key: "find-pt-field", Body: json.RawMessage(`{"sku":"c","qty":2}`), JMESPath: "powertools_json(body).sku", Status: 201}
	rep = r.call(sel)
	r.expect("body field", r.ptFind(live, field, rep.Event), rep.RedisKey, "no fingerprint stored")
	r.expect("body field, qty changed", r.ptFind(live, field, ptEvent(sel.Key, `{"sku":"c","qty":3}`)), rep.RedisKey, "no fingerprint stored")
	sel.Body = json.RawMessage(`{"sku":"c","qty":3}`)
	if again := r.call(sel); again.Ran {
		r.t.Errorf("the library ran the handler again for the same sku: %+v", again)
	}
	never := ptEvent("find-pt-never", `{}`)
	r.expect("never made", r.ptFind(live, ptHeaderFlags, never), "", "not found")
	r.expect("--rdb", r.ptFind([]string{"--rdb", r.srv.Snapshot(r.t)}, field, ptEvent(sel.Key, `{"sku":"c","qty":9}`)), rep.RedisKey, "no fingerprint stored")
}

var ptHeaderFlags = []string{"--event-key-jmespath", `headers."idempotency-key"`, "--validation-jmespath", "body"}

// ptValidated: keyed by the Idempotency-Key header, the body validated.
// In flight, the record holds the validation hash: the same body is the
// same request, a changed one what the library refuses. Once complete,
// the library has dropped the hash and refuses every retry.
func (r *interopRig) ptValidated(live []string) {
	body := `{"sku":"a","qty":2,"note":"\"x\""}`
	cmd := interop.Cmd{Lib: r.il.lib, Key: "find-pt-valid", Body: json.RawMessage(body), Validation: true, Status: 201}
	held, err := r.d.Start(r.ctx(), "pt-held", cmd)
	if err != nil || !held.Started {
		r.t.Fatalf("start: %+v %v", held, err)
	}
	r.expect("validated, in flight", r.ptFind(live, ptHeaderFlags, ptEvent(cmd.Key, body)), held.RedisKey, "same request")
	changed := ptEvent(cmd.Key, `{"sku":"a","qty":3,"note":"\"x\""}`)
	r.expect("validated, in flight, qty changed", r.ptFind(live, ptHeaderFlags, changed), held.RedisKey, "different request under this key: the library answers IdempotencyValidationError")
	lib := cmd
	lib.Body = json.RawMessage(`{"sku":"a","qty":3,"note":"\"x\""}`)
	if rep := r.call(lib); rep.ErrorName != "IdempotencyValidationError" {
		r.t.Errorf("the library on the changed body: %+v", rep)
	}
	if _, err := r.d.Finish(r.ctx(), "pt-held"); err != nil {
		r.t.Fatal(err)
	}
	r.expect("validated, complete", r.ptFind(live, ptHeaderFlags, ptEvent(cmd.Key, body)), held.RedisKey, "no fingerprint stored: cannot tell; with payload validation on, the library answers IdempotencyValidationError")
	if rep := r.call(cmd); rep.ErrorName != "IdempotencyValidationError" {
		r.t.Errorf("the library on the same body, complete: %+v", rep)
	}
}

// express-idempotency keys by the raw Idempotency-Key and compares the
// stored request: find reads it and compares as the library does.
func (r *interopRig) findsExpressRequests() {
	live := []string{"--url", r.srv.URL(0)}
	body := `{"sku":"e","qty":2,"tags":["a",1]}`
	rep := r.call(interop.Cmd{Key: "find-express-a", Body: json.RawMessage(body), Status: 201, Response: map[string]any{"id": 1}})
	if !rep.Ran || rep.RedisKey == "" {
		r.t.Fatalf("%+v", rep)
	}
	r.expect("same", r.find(append(live, "--request", r.nodeRequest("find-express-a", body))...), rep.RedisKey, "same request")
	reordered := `{"tags":["a",1],"qty":2,"sku":"e"}`
	r.expect("names reordered", r.find(append(live, "--request", r.nodeRequest("find-express-a", reordered))...), rep.RedisKey, "same request")
	changed := `{"sku":"e","qty":3,"tags":["a",1]}`
	r.expect("qty changed", r.find(append(live, "--request", r.nodeRequest("find-express-a", changed))...), rep.RedisKey, "different request under this key: the library answers 417")
	if again := r.call(interop.Cmd{Key: "find-express-a", Body: json.RawMessage(changed)}); again.Ran || again.Status != 417 {
		r.t.Errorf("the library on the changed body: %+v (want 417, handler not run)", again)
	}
	r.expect("never made", r.find(append(live, "--request", r.nodeRequest("find-express-never", body))...), "find-express-never", "not found")
	rdb := []string{"--rdb", r.srv.Snapshot(r.t)}
	r.expect("--rdb", r.find(append(rdb, "--request", r.nodeRequest("find-express-a", body))...), rep.RedisKey, "same request")
	r.expect("--rdb qty changed", r.find(append(rdb, "--request", r.nodeRequest("find-express-a", changed))...), rep.RedisKey, "different request under this key: the library answers 417")
	r.expect("--rdb never made", r.find(append(rdb, "--request", r.nodeRequest("find-express-never", body))...), "find-express-never", "not found")
}
