package inspect

import (
	"context"
	_ "embed"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/idemctl/idemctl/inspect/pace"
)

// Read paths: how a batch's records are read from a live server.
const (
	ReadAuto   = "auto"   // the path that costs the server least: the client's, on every server measured (docs/performance.md)
	ReadClient = "client" // pipelines of plain commands (PTTL, MEMORY USAGE, HMGET…)
	ReadScript = "script" // one read-only script call per batch (or several, each under its time cap)
)

// ReadPaths lists the choices, for flags and messages.
var ReadPaths = []string{ReadAuto, ReadClient, ReadScript}

//go:embed readbatch.lua
var readBatchLua string

// callCap bounds one script call's server time with no latency budget: a
// script holds the server for its whole run, so another client waits at
// most this long behind it.
const callCap = time.Millisecond

// scriptGuess is the server time per key assumed before the first batch
// is measured: on the slow side, so the first calls are short.
const scriptGuess = 5 * time.Microsecond

// scriptPath is the server-side read path of one node's scan: the loaded
// script, the time it takes per key, and why it was left, if it was.
type scriptPath struct {
	sha     string
	body    string        // the script as loaded: its cluster variant on a cluster node
	cap     time.Duration // one call's server time at most
	cluster bool          // keys go undeclared (allow-cross-slot-keys): a batch spans slots
	perKey  atomic.Int64  // ns of server time per key, recent calls
	off     atomic.Bool   // fell back to the client path
	mu      sync.Mutex
	note    string // why it fell back
}

// ScriptRefusedError says the server does not let this user run the
// read script, when --read-path script asked for it.
type ScriptRefusedError struct{ Reason string }

func (e *ScriptRefusedError) Error() string {
	return "the server refused the script read path (" + e.Reason + "): grant +evalsha +script|load, or use --read-path client"
}

// probeScript loads the read script and runs it on no keys, once per
// node: nil with the reason when the client path must be used instead.
// auto does not try it: measured on Redis 7.0, 8.0 and Valkey 8.1, a
// redis.call costs the server more than the same command pipelined, so
// the script path costs 1.2-1.5 × the client path a key.
func probeScript(ctx context.Context, c redis.UniversalClient, mode string, budget time.Duration, cluster bool) (*scriptPath, string, error) {
	if mode != ReadScript {
		return nil, "", nil
	}
	body := readBatchLua
	if cluster {
		body = clusterVariant(body)
	}
	sha, err := c.ScriptLoad(ctx, body).Result()
	if err == nil {
		err = c.Do(ctx, "evalsha", sha, 0, 0, 0, 0, 0, 0, 0, 0, "hash", "", 0, 0, 0, 0).Err()
	}
	if err != nil {
		if !isServerErr(err) {
			return nil, "", err // the connection, not a refusal
		}
		reason := Line(err.Error())
		return nil, reason, &ScriptRefusedError{Reason: reason}
	}
	p := &scriptPath{sha: sha, body: body, cap: callCap, cluster: cluster}
	if budget > 0 {
		p.cap = min(callCap, time.Duration(float64(budget)*pace.BurstShare))
	}
	p.perKey.Store(int64(scriptGuess))
	return p, "", nil
}

// clusterVariant is the read script for a cluster node: the same body,
// allowed to read keys of several slots (all served by the node it runs
// on; a key that is not, mid-migration, fails the call and the scan goes
// on by the client path).
func clusterVariant(body string) string {
	_, rest, _ := strings.Cut(body, "\n")
	return "#!lua flags=no-writes,allow-cross-slot-keys\n" + rest
}

// fallBack leaves the script path for the rest of the scan, saying why.
func (p *scriptPath) fallBack(why string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.off.Load() {
		p.note = why
		p.off.Store(true)
	}
}

// on reports whether batches are read by the script.
func (p *scriptPath) on() bool { return p != nil && !p.off.Load() }

// served folds a batch's measured server time into the per-key cost that
// sizes the next calls: a dearer batch is believed at once (a call must
// not outgrow its cap while an average catches up), a cheaper one moves it
// a quarter of the way (one fast batch is no proof the server is idle).
func (p *scriptPath) served(keys int, span time.Duration) {
	if keys <= 0 || span <= 0 {
		return
	}
	now := int64(span) / int64(keys)
	old := p.perKey.Load()
	if now > old {
		p.perKey.Store(now)
		return
	}
	p.perKey.Store((3*old + now) / 4)
}

// callKeys is how many keys one call may read to stay under its cap.
func (p *scriptPath) callKeys() int {
	per := max(p.perKey.Load(), 1)
	return min(max(int(int64(p.cap)*8/10/per), pace.MinBatch), pace.MaxBatch) // 80 %: margin for a busier server
}

// readPathText says which path a scan used, and why it left the script's.
func readPathText(mode string, p *scriptPath, refused string) string {
	switch {
	case mode == ReadClient, mode == ReadAuto:
		return ReadClient
	case p == nil && refused == "":
		return "" // not read at all: the server could not be reached
	case p == nil:
		return fmt.Sprintf("client (the script path was refused: %s)", refused)
	case p.off.Load():
		p.mu.Lock()
		defer p.mu.Unlock()
		return fmt.Sprintf("client (left the script path: %s)", p.note)
	}
	return ReadScript
}

// ReadPathName is the path a coverage's ReadPath names, without the
// reason: script, client, or "" (a snapshot, or not read).
func ReadPathName(text string) string {
	if strings.HasPrefix(text, ReadClient) {
		return ReadClient
	}
	return text
}

// scriptFailure tells a call's error that means "read this batch another
// way" (the script refused, killed, busy or flushed) from a broken
// connection; the reason is the server's first line.
func scriptFailure(err error) (string, bool) {
	if err == nil || !isServerErr(err) {
		return "", false
	}
	return Line(err.Error()), true
}

func isNoScript(err error) bool {
	return err != nil && strings.HasPrefix(err.Error(), "NOSCRIPT")
}
