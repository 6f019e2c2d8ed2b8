package follow

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/idemctl/idemctl/inspect"
)

// A watch connection is one socket to one primary, opened through the
// client's own dialer (so TLS, a Sentinel's current master and a test's
// proxy all apply), that speaks RESP3 itself. It is ours alone: no pool
// reconnects it behind our back, so any end of it (a read error, a
// heartbeat unanswered, a frame it cannot parse) is seen, and reported as
// "may have missed changes" before anything else happens.

// endpoint is how to reach one primary.
type endpoint struct {
	addr       string // for messages
	dial       func(ctx context.Context) (net.Conn, error)
	user, pass string
	db         int
	// client reaches the primary through the pool: when it reaches
	// another server than the watch connection (a Sentinel switched
	// masters), the watch is on the wrong one.
	client redis.UniversalClient
}

// endpointOf is the endpoint of a client connected to one server.
func endpointOf(addr string, c redis.UniversalClient) (endpoint, error) {
	cl, ok := c.(*redis.Client)
	if !ok {
		return endpoint{}, fmt.Errorf("%s: not a single-server client (%T)", addr, c)
	}
	o := cl.Options()
	ep := endpoint{addr: addr, user: o.Username, pass: o.Password, db: o.DB, client: c}
	if o.CredentialsProvider != nil {
		ep.user, ep.pass = o.CredentialsProvider()
	}
	network, target, dialer := o.Network, o.Addr, o.Dialer
	if network == "" {
		network = "tcp"
	}
	ep.dial = func(ctx context.Context) (net.Conn, error) { return dialer(ctx, network, target) }
	return ep, nil
}

// errNotPrimary: the server watched is (now) a replica.
var errNotPrimary = errors.New("not a primary")

// refusedError: the server will not watch this way (ACL, an old server,
// a command renamed away): the next mode is tried, not a reconnect.
type refusedError struct{ err error }

func (e refusedError) Error() string { return e.err.Error() }
func (e refusedError) Unwrap() error { return e.err }

// sink receives what a watch connection learns. Its methods must not
// block (they run on the connection's reader).
type sink interface {
	changed(keys []string)
	missed(addr, reason string) // may have missed changes: re-sync
}

// watchSpec is what to watch.
type watchSpec struct {
	mode      Mode // ModeTracking or ModeNotifications
	prefixes  []string
	heartbeat time.Duration
	timeout   time.Duration // for a reply
}

// watchConn is an open, set-up watch connection.
type watchConn struct {
	ep      endpoint
	spec    watchSpec
	conn    net.Conn
	r       *bufio.Reader
	w       *bufio.Writer
	replies chan any
	done    chan error
	runID   string // the server's, from INFO at setup ("" unknown)
}

// openWatch dials ep and asks it to watch spec's prefixes. A refusal of
// HELLO 3, CLIENT TRACKING or PSUBSCRIBE is a refusedError.
func openWatch(ctx context.Context, ep endpoint, spec watchSpec) (*watchConn, error) {
	dctx, cancel := context.WithTimeout(ctx, spec.timeout)
	defer cancel()
	nc, err := ep.dial(dctx)
	if err != nil {
		return nil, err
	}
	wc := &watchConn{ep: ep, spec: spec, conn: nc, r: bufio.NewReaderSize(nc, 64<<10), w: bufio.NewWriter(nc)}
	if err := wc.setup(); err != nil {
		nc.Close()
		return nil, err
	}
	return wc, nil
}

// setup runs the handshake synchronously, before the reader starts.
func (wc *watchConn) setup() error {
	_ = wc.conn.SetDeadline(time.Now().Add(wc.spec.timeout))
	defer func() { _ = wc.conn.SetDeadline(time.Time{}) }()
	hello := []string{"HELLO", "3"}
	if wc.ep.pass != "" {
		hello = append(hello, "AUTH", first(wc.ep.user, "default"), wc.ep.pass)
	}
	hello = append(hello, "SETNAME", "idemctl-follow")
	if _, err := wc.call(hello...); err != nil {
		return refusedError{fmt.Errorf("HELLO 3: %w", err)}
	}
	if wc.ep.db != 0 {
		if _, err := wc.call("SELECT", strconv.Itoa(wc.ep.db)); err != nil {
			return err
		}
	}
	if info, err := wc.call("INFO", "server"); err == nil {
		wc.runID = infoValue(info, "run_id")
	}
	if role, err := wc.call("ROLE"); err == nil {
		if r, _ := role.([]any); len(r) > 0 && r[0] != "master" {
			return fmt.Errorf("%w: %s is a %v", errNotPrimary, wc.ep.addr, r[0])
		}
	}
	if wc.spec.mode == ModeTracking {
		args := []string{"CLIENT", "TRACKING", "ON", "BCAST"}
		for _, p := range wc.spec.prefixes {
			args = append(args, "PREFIX", p)
		}
		if _, err := wc.call(args...); err != nil {
			return refusedError{fmt.Errorf("CLIENT TRACKING: %w", err)}
		}
		return nil
	}
	args := []string{"PSUBSCRIBE"}
	for _, p := range wc.spec.prefixes {
		args = append(args, fmt.Sprintf("__keyspace@%d__:%s*", wc.ep.db, inspect.EscapeGlob(p)))
	}
	if err := writeCommand(wc.w, args...); err != nil {
		return err
	}
	for range wc.spec.prefixes { // one confirmation per pattern, as pushes
		v, err := readFrame(wc.r)
		if err != nil {
			return err
		}
		if e, ok := v.(serverError); ok {
			return refusedError{fmt.Errorf("PSUBSCRIBE: %w", e)}
		}
	}
	return nil
}

// call sends a command and reads its reply (setup only: no pushes yet).
func (wc *watchConn) call(args ...string) (any, error) {
	if err := writeCommand(wc.w, args...); err != nil {
		return nil, err
	}
	v, err := readFrame(wc.r)
	if err != nil {
		return nil, err
	}
	if e, ok := v.(serverError); ok {
		return nil, e
	}
	return v, nil
}

// run reads the connection until it ends or ctx does, handing changed
// keys to s and sending a heartbeat (ROLE) every spec.heartbeat: an
// unanswered one, or a primary turned replica, ends it. The error says
// why it ended (nil: ctx).
func (wc *watchConn) run(ctx context.Context, s sink) error {
	defer wc.conn.Close()
	wc.replies, wc.done = make(chan any, 4), make(chan error, 1)
	go wc.read(s)
	tick := time.NewTicker(wc.spec.heartbeat)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case err := <-wc.done:
			return err
		case <-tick.C:
			if err := wc.heartbeat(ctx); err != nil {
				return err
			}
		}
	}
}

// heartbeat asks ROLE and checks the server is still a primary.
func (wc *watchConn) heartbeat(ctx context.Context) error {
	_ = wc.conn.SetWriteDeadline(time.Now().Add(wc.spec.timeout))
	if err := writeCommand(wc.w, "ROLE"); err != nil {
		return fmt.Errorf("heartbeat: %w", err)
	}
	t := time.NewTimer(wc.spec.timeout)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return nil
	case err := <-wc.done:
		return err
	case <-t.C:
		return fmt.Errorf("no heartbeat reply within %s", wc.spec.timeout)
	case v := <-wc.replies:
		role, _ := v.([]any)
		if len(role) == 0 {
			return fmt.Errorf("heartbeat: unexpected ROLE reply")
		}
		if r, _ := role[0].(string); r != "master" {
			return fmt.Errorf("%w: the server is now a %s (failover)", errNotPrimary, r)
		}
		return wc.samePrimary(ctx)
	}
}

// samePrimary checks the client's pool still reaches the server watched.
func (wc *watchConn) samePrimary(ctx context.Context) error {
	if wc.runID == "" || wc.ep.client == nil {
		return nil
	}
	ictx, cancel := context.WithTimeout(ctx, wc.spec.timeout)
	defer cancel()
	info, err := wc.ep.client.Info(ictx, "server").Result()
	if err != nil {
		return nil // the pool's trouble is the reads' to report
	}
	if id := infoValue(info, "run_id"); id != "" && id != wc.runID {
		return fmt.Errorf("the client now reaches another server (failover)")
	}
	return nil
}

// infoValue is one field of an INFO reply.
func infoValue(v any, name string) string {
	s, _ := v.(string)
	for _, line := range strings.Split(s, "\n") {
		if k, val, ok := strings.Cut(strings.TrimSpace(line), ":"); ok && k == name {
			return val
		}
	}
	return ""
}

// read is the connection's reader: pushes go to s, replies to run.
func (wc *watchConn) read(s sink) {
	for {
		v, err := readFrame(wc.r)
		if err != nil {
			wc.done <- err
			return
		}
		p, ok := v.(push)
		if !ok {
			select {
			case wc.replies <- v:
			default:
				wc.done <- fmt.Errorf("%w: unexpected reply", errProtocol)
				return
			}
			continue
		}
		if err := wc.handle(p, s); err != nil {
			wc.done <- err
			return
		}
	}
}

// handle turns one push into changed keys; one it cannot read, or a flush,
// is a "may have missed" (a flush also ends nothing: the watch goes on).
func (wc *watchConn) handle(p push, s sink) error {
	kind, _ := p[0].(string)
	switch {
	case kind == "invalidate" && len(p) == 2:
		if p[1] == nil {
			s.missed(wc.ep.addr, "the database was flushed (FLUSHDB/FLUSHALL)")
			return nil
		}
		keys, ok := strings_(p[1])
		if !ok {
			return fmt.Errorf("%w: invalidation without keys", errProtocol)
		}
		s.changed(keys)
		return nil
	case kind == "pmessage" && len(p) == 4:
		ch, _ := p[2].(string)
		_, key, ok := strings.Cut(ch, "__:")
		if !ok || !strings.HasPrefix(ch, "__keyspace@") {
			return fmt.Errorf("%w: notification channel %q", errProtocol, ch)
		}
		s.changed([]string{key})
		return nil
	case kind == "psubscribe" || kind == "punsubscribe":
		return nil
	}
	return fmt.Errorf("%w: unexpected push %q", errProtocol, kind)
}

// strings_ is v as a list of strings.
func strings_(v any) ([]string, bool) {
	list, ok := v.([]any)
	if !ok {
		return nil, false
	}
	out := make([]string, 0, len(list))
	for _, x := range list {
		s, ok := x.(string)
		if !ok {
			return nil, false
		}
		out = append(out, s)
	}
	return out, true
}

// isRefused: the error is the server saying no (a refusedError).
func isRefused(err error) bool {
	var r refusedError
	return errors.As(err, &r)
}

func first(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
