// Package interop drives real idempotency libraries from npm against a real
// redis-server, so tests can create genuine library records and read them
// back through the library itself. It runs testdata/interop/driver.mjs (see
// testdata/interop/README.md for the protocol and for what each library
// writes to Redis) under node, with the packages pinned in
// testdata/interop/package-lock.json installed by
// `npm ci --prefix testdata/interop` (which .ci/test does).
//
// A test kit (ARCHITECTURE.md): imported by tests (and the bench harness)
// only; it may import any product package.
package interop

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// Libraries the driver knows.
const (
	Powertools         = "powertools"          // @aws-lambda-powertools/idempotency + cache layer
	NodeIdempotency    = "node-idempotency"    // @node-idempotency/core + redis adapter, on express
	ExpressIdempotency = "express-idempotency" // express-idempotency + express-idempotency-redis-adapter
)

// Libs lists every library, for table tests.
var Libs = []string{Powertools, NodeIdempotency, ExpressIdempotency}

// Handler outcomes.
const (
	OK    = "ok"    // answer Status/Response
	Error = "error" // fail with Status (see ErrorVia)
	Crash = "crash" // SIGKILL the process inside the handler
)

// InstallHint says how to get what the driver needs.
const InstallHint = "run `npm ci --prefix testdata/interop` from the module root (needs node and npm: `apt-get install -y nodejs npm`), or `bash .ci/test`"

// Cmd is one driver command. Op is filled in by Call, Start and Finish.
type Cmd struct {
	Op  string `json:"op"`
	ID  string `json:"id,omitempty"`
	Lib string `json:"lib,omitempty"`
	// Key is the idempotency key: the Idempotency-Key header for the
	// express libraries, the event's headers."idempotency-key" (picked by
	// the default JMESPath) for Powertools.
	Key      string `json:"key,omitempty"`
	Body     any    `json:"body,omitempty"`
	Outcome  string `json:"outcome,omitempty"`  // OK (default), Error, Crash
	Status   int    `json:"status,omitempty"`   // default 200 for ok, 500 for error
	Response any    `json:"response,omitempty"` // JSON body the handler answers
	// EmptyBody makes an express handler answer res.status(Status).send()
	// with no body.
	EmptyBody bool `json:"emptyBody,omitempty"`
	// ErrorVia picks how an Error outcome fails. Express libraries: "send"
	// (default: res.status(Status).json(Response)), "next" (next(err) to
	// the app's JSON error handler), "default-handler" (next(err) to
	// express's finalhandler, which bypasses res.send), "report"
	// (express-idempotency's reportError, then send). Powertools: "throw"
	// (default) or "return" (return the error response as a result).
	ErrorVia string `json:"errorVia,omitempty"`
	// TTLSeconds sets the record TTL: Powertools expiresAfterSeconds,
	// node-idempotency cacheTTLMS (×1000), express-idempotency adapter ttl.
	// 0 keeps the library default.
	TTLSeconds int `json:"ttlSeconds,omitempty"`
	// RemainingMs is the fake Lambda context's getRemainingTimeInMillis()
	// (Powertools in-progress timeout); 0 means 60000.
	RemainingMs int    `json:"remainingMs,omitempty"`
	Method      string `json:"method,omitempty"` // default POST
	Path        string `json:"path,omitempty"`   // default /orders
	// Powertools only.
	FunctionName string `json:"functionName,omitempty"` // AWS_LAMBDA_FUNCTION_NAME, default idemctl-interop-fn
	KeyPrefix    string `json:"keyPrefix,omitempty"`    // makeIdempotent keyPrefix (replaces the function name)
	JMESPath     string `json:"jmesPath,omitempty"`     // default headers."idempotency-key"
	Validation   bool   `json:"validation,omitempty"`   // payloadValidationJmesPath "body"
	NoContext    bool   `json:"noContext,omitempty"`    // no Lambda context: no in_progress_expiration
}

// Reply is the driver's answer to call, start and finish.
type Reply struct {
	Started bool `json:"started,omitempty"` // start: the handler was entered and is held
	// Ran tells whether the handler body ran for this call.
	Ran     bool              `json:"ran"`
	Status  int               `json:"status,omitempty"` // HTTP status / Lambda statusCode; 0 if none
	Body    json.RawMessage   `json:"body,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
	// Error is the error the caller saw: the library's refusal (in
	// progress, conflict, fingerprint mismatch…), the handler's own
	// failure (ErrorName "HandlerError") or a crash (ErrorName "Crashed").
	Error     string `json:"error,omitempty"`
	ErrorName string `json:"errorName,omitempty"`
	RedisKey  string `json:"redisKey,omitempty"`
	// Event is the Lambda event a Powertools call sent.
	Event   json.RawMessage `json:"event,omitempty"`
	Crashed bool            `json:"crashed,omitempty"`
}

// BodyString is Body compacted, "" when there is none.
func (r Reply) BodyString() string {
	if len(r.Body) == 0 {
		return ""
	}
	var b bytes.Buffer
	if json.Compact(&b, r.Body) != nil {
		return string(r.Body)
	}
	return b.String()
}

// Driver is one running driver process. Its methods are safe for
// concurrent use but run one command at a time.
type Driver struct {
	Dir      string            // testdata/interop
	Versions map[string]string // package versions the driver loaded

	t      testing.TB
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  chan []byte
	exited chan struct{}
	stderr *tailBuffer

	mu     sync.Mutex
	broken error
}

// Dir finds testdata/interop by walking up from the working directory to
// the module root (the directory holding go.mod).
func Dir() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := wd; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return filepath.Join(d, "testdata", "interop"), nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("no go.mod above %s", wd)
		}
	}
}

// Start runs the driver against the Redis at redisAddr (host:port, db 0)
// and stops it when the test ends. A missing node or node_modules fails the
// test with InstallHint; it never skips.
func Start(t testing.TB, redisAddr string) *Driver {
	t.Helper()
	dir, err := Dir()
	if err != nil {
		t.Fatalf("interop: %v", err)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("interop: node not found in PATH: %s", InstallHint)
	}
	pins, err := pinned(dir)
	if err != nil {
		t.Fatalf("interop: %v", err)
	}
	for name := range pins {
		if _, err := os.Stat(filepath.Join(dir, "node_modules", name, "package.json")); err != nil {
			t.Fatalf("interop: %s is not installed in %s/node_modules: %s", name, dir, InstallHint)
		}
	}

	home := t.TempDir()
	cmd := exec.Command(node, filepath.Join(dir, "driver.mjs"), "redis://"+redisAddr+"/0")
	cmd.Dir = dir
	cmd.Env = []string{
		"PATH=" + filepath.Dir(node) + string(os.PathListSeparator) + "/usr/bin:/bin",
		"HOME=" + home,
		"TMPDIR=" + home,
		"NODE_ENV=production",
		"NO_COLOR=1",
	}
	setProcAttr(cmd)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	d := &Driver{Dir: dir, t: t, cmd: cmd, stdin: stdin, lines: make(chan []byte, 16),
		exited: make(chan struct{}), stderr: &tailBuffer{max: 64 << 10}}
	cmd.Stderr = d.stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("interop: start node: %v", err)
	}
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
		for sc.Scan() {
			d.lines <- append([]byte(nil), sc.Bytes()...)
		}
		close(d.lines)
	}()
	go func() { _ = cmd.Wait(); close(d.exited) }()
	t.Cleanup(d.stop)

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	raw, err := d.Do(ctx, Cmd{Op: "ping"})
	if err != nil {
		t.Fatalf("interop: driver did not answer ping: %v", err)
	}
	var pong struct {
		OK       bool              `json:"ok"`
		Versions map[string]string `json:"versions"`
	}
	if err := json.Unmarshal(raw, &pong); err != nil || !pong.OK {
		t.Fatalf("interop: bad ping reply %s", raw)
	}
	d.Versions = pong.Versions
	for name, want := range pins {
		if got := pong.Versions[name]; got != want {
			t.Fatalf("interop: %s is %q in node_modules, package.json pins %q: %s", name, got, want, InstallHint)
		}
	}
	return d
}

// pinned reads the exact versions package.json pins.
func pinned(dir string) (map[string]string, error) {
	b, err := os.ReadFile(filepath.Join(dir, "package.json"))
	if err != nil {
		return nil, err
	}
	var pj struct {
		Dependencies map[string]string `json:"dependencies"`
	}
	if err := json.Unmarshal(b, &pj); err != nil {
		return nil, fmt.Errorf("%s/package.json: %v", dir, err)
	}
	return pj.Dependencies, nil
}

// Do sends one command and returns the raw reply line. A {"fatal":…}
// reply is an error; a timeout or a dead driver breaks the Driver.
func (d *Driver) Do(ctx context.Context, c Cmd) (json.RawMessage, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.broken != nil {
		return nil, d.broken
	}
	line, err := json.Marshal(c)
	if err != nil {
		return nil, err
	}
	if _, err := d.stdin.Write(append(line, '\n')); err != nil {
		d.broken = fmt.Errorf("interop driver: write: %v%s", err, d.stderrTail())
		return nil, d.broken
	}
	select {
	case raw, ok := <-d.lines:
		if !ok {
			d.broken = fmt.Errorf("interop driver exited%s", d.stderrTail())
			return nil, d.broken
		}
		var f struct {
			Fatal *string `json:"fatal"`
		}
		if json.Unmarshal(raw, &f) == nil && f.Fatal != nil {
			return nil, fmt.Errorf("interop driver: %s: %s", c.Op, *f.Fatal)
		}
		return raw, nil
	case <-ctx.Done():
		d.broken = fmt.Errorf("interop driver: %s %s: %v (driver abandoned)%s", c.Op, c.Lib, ctx.Err(), d.stderrTail())
		return nil, d.broken
	}
}

func (d *Driver) reply(ctx context.Context, c Cmd) (Reply, error) {
	raw, err := d.Do(ctx, c)
	if err != nil {
		return Reply{}, err
	}
	var r Reply
	if err := json.Unmarshal(raw, &r); err != nil {
		return Reply{}, fmt.Errorf("interop driver: bad reply %s: %v", raw, err)
	}
	return r, nil
}

// Call runs one request through the library.
func (d *Driver) Call(ctx context.Context, c Cmd) (Reply, error) {
	c.Op = "call"
	return d.reply(ctx, c)
}

// Start starts a request whose handler blocks once entered, and returns
// when the library's in-progress record exists (Started true). If the
// handler was never entered (a replay or a refusal), Started is false and
// the reply is the call's final one.
func (d *Driver) Start(ctx context.Context, id string, c Cmd) (Reply, error) {
	c.Op, c.ID = "start", id
	return d.reply(ctx, c)
}

// Finish lets the held request id return its outcome and returns its reply.
func (d *Driver) Finish(ctx context.Context, id string) (Reply, error) {
	return d.reply(ctx, Cmd{Op: "finish", ID: id})
}

// Stderr is the tail of what the driver logged.
func (d *Driver) Stderr() string { return d.stderr.String() }

func (d *Driver) stderrTail() string {
	s := strings.TrimSpace(d.stderr.String())
	if s == "" {
		return ""
	}
	return "\ndriver stderr:\n" + s
}

func (d *Driver) stop() {
	_ = d.stdin.Close()
	select {
	case <-d.exited:
	case <-time.After(5 * time.Second):
		killGroup(d.cmd)
		<-d.exited
	}
	killGroup(d.cmd) // crash children left behind, if any
	if d.t.Failed() {
		if s := strings.TrimSpace(d.stderr.String()); s != "" {
			d.t.Logf("interop driver stderr:\n%s", s)
		}
	}
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (w *tailBuffer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.b = append(w.b, p...)
	if len(w.b) > w.max {
		w.b = append([]byte(nil), w.b[len(w.b)-w.max:]...)
	}
	return len(p), nil
}

func (w *tailBuffer) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return string(w.b)
}
