package actions

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/idemctl/idemctl/actions/write"
)

// Durability is what a write must reach before the run counts it kept.
// Redis replicates asynchronously: a compare-and-set the primary ran is
// lost if the primary dies before a replica has it and that replica is
// promoted. WAIT, on the connection that wrote, blocks until that many
// replicas acknowledged the connection's writes, or the timeout.
type Durability struct {
	// MinReplicas is how many replicas must acknowledge each batch; 0
	// (AutoReplicas) takes the replicas the primary reports connected, at
	// most 1.
	MinReplicas int
	// NoWait turns the wait off (--min-replicas 0).
	NoWait bool
	// Timeout bounds each wait (default 2s).
	Timeout time.Duration
	// RequireFsync also waits (WAITAOF) for the write to be fsynced: in
	// the primary's AOF when it has one, and on the replicas asked for.
	RequireFsync bool
}

// AutoReplicas is Durability.MinReplicas's default: as many replicas as
// the primary has connected, at most one.
const AutoReplicas = 0

// DefaultReplicaTimeout bounds a wait when Durability.Timeout is zero.
const DefaultReplicaTimeout = 2 * time.Second

// NoReplicaNote is said where a primary has no replica to wait for.
const NoReplicaNote = "no replica: a failover would lose nothing it has, and protect nothing"

// String says, for a plan, what each batch will wait for.
func (d Durability) String() string {
	timeout := d.Timeout
	if timeout <= 0 {
		timeout = DefaultReplicaTimeout
	}
	var s string
	switch {
	case d.NoWait:
		s = "not waited for (--min-replicas 0): a failover could take writes back unseen"
	case d.MinReplicas > 0:
		s = fmt.Sprintf("each batch waits up to %s for %d %s to acknowledge it (WAIT)", timeout, d.MinReplicas, plural(d.MinReplicas, "replica", "replicas"))
	default:
		s = fmt.Sprintf("each batch waits up to %s for the primary's replica to acknowledge it (WAIT), where it has one", timeout)
	}
	if d.RequireFsync {
		s += ", and for its fsync (WAITAOF)"
	}
	return s
}

// Applies says whether the wait is worth saying before a write: the
// operator asked for one (--min-replicas, --require-fsync) or for none
// (--min-replicas 0), or the primaries c writes to have a replica to wait
// for. A server that does not say counts as having one.
func (d Durability) Applies(ctx context.Context, c redis.UniversalClient) bool {
	if d.NoWait || d.MinReplicas > 0 || d.RequireFsync || c == nil {
		return true
	}
	if cc, ok := c.(*redis.ClusterClient); ok {
		var found atomic.Bool
		err := cc.ForEachMaster(ctx, func(ctx context.Context, m *redis.Client) error {
			if n, err := onlineReplicas(ctx, m); err != nil || n > 0 {
				found.Store(true)
			}
			return nil
		})
		return err != nil || found.Load()
	}
	n, err := onlineReplicas(ctx, c)
	return err != nil || n > 0
}

// primaryConns holds, for one batch, a connection per primary written to:
// WAIT counts only the writes of the connection it is sent on, so the
// scripts and their WAIT share one.
type primaryConns struct {
	client redis.UniversalClient
	conns  map[string]*primaryConn
}

type primaryConn struct {
	conn   *redis.Conn
	addr   string
	writes int // writes applied on it this batch
}

func newPrimaryConns(c redis.UniversalClient) *primaryConns {
	return &primaryConns{client: c, conns: map[string]*primaryConn{}}
}

// forKey is the connection to key's primary; nil when the client is of a
// kind whose primary cannot be pinned (the write then goes through the
// client and is reported unconfirmed).
func (pc *primaryConns) forKey(ctx context.Context, key string) *primaryConn {
	var node *redis.Client
	switch c := pc.client.(type) {
	case *redis.ClusterClient:
		n, err := c.MasterForKey(ctx, key)
		if err != nil {
			return nil
		}
		node = n
	case *redis.Client:
		node = c
	default:
		return nil
	}
	addr := node.Options().Addr
	if p := pc.conns[addr]; p != nil {
		return p
	}
	p := &primaryConn{conn: node.Conn(), addr: addr}
	pc.conns[addr] = p
	return p
}

func (pc *primaryConns) close() {
	for _, p := range pc.conns {
		_ = p.conn.Close()
	}
}

// wait asks each primary written to for the batch's acknowledgements.
func (pc *primaryConns) wait(ctx context.Context, d Durability, wanted func(ctx context.Context, p *primaryConn) (int, string)) map[string]write.Replication {
	out := map[string]write.Replication{}
	for addr, p := range pc.conns {
		if p.writes == 0 {
			continue
		}
		out[addr] = p.wait(ctx, d, wanted)
	}
	return out
}

func (p *primaryConn) wait(ctx context.Context, d Durability, wanted func(ctx context.Context, p *primaryConn) (int, string)) write.Replication {
	n, note := wanted(ctx, p)
	r := write.Replication{Wanted: n, Note: note}
	if n == 0 && !d.RequireFsync {
		return r
	}
	timeout := d.Timeout
	if timeout <= 0 {
		timeout = DefaultReplicaTimeout
	}
	// The wait itself may take the whole timeout: the context gets more.
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), timeout+5*time.Second)
	defer cancel()
	if n > 0 {
		acked, err := p.conn.Do(wctx, "WAIT", n, timeout.Milliseconds()).Int()
		if err != nil {
			return write.Replication{Wanted: n, NotReplicated: true, Note: "the primary did not answer WAIT: " + waitError(err, "wait")}
		}
		r.Acked = acked
		if acked < n {
			r.NotReplicated = true
			r.Note = fmt.Sprintf("%d of %d replicas acknowledged within %s: a failover now could take this write back", acked, n, timeout)
		}
	}
	if d.RequireFsync {
		fsync(wctx, &r, p, n, timeout)
	}
	return r
}

// fsync runs WAITAOF: the primary's own AOF when it keeps one, and n
// replicas'.
func fsync(ctx context.Context, r *write.Replication, p *primaryConn, n int, timeout time.Duration) {
	local := 0
	if aofEnabled(ctx, p.conn) {
		local = 1
	}
	if local == 0 && n == 0 {
		r.NotReplicated = true
		r.Note = "--require-fsync: nothing here fsyncs the write (appendonly is off and the primary has no replica)"
		return
	}
	res, err := p.conn.Do(ctx, "WAITAOF", local, n, timeout.Milliseconds()).Int64Slice()
	if err != nil || len(res) != 2 {
		r.NotReplicated = true
		r.Note = "--require-fsync: " + waitError(err, "waitaof")
		return
	}
	r.Fsynced = &write.Fsynced{Local: int(res[0]), Replicas: int(res[1])}
	if int(res[0]) < local || int(res[1]) < n {
		r.NotReplicated = true
		r.Note = fmt.Sprintf("fsynced on %d of %d local and %d of %d replicas within %s: a crash now could take this write back",
			res[0], local, res[1], n, timeout)
	}
}

// waitError says why a wait failed, in the operator's terms.
func waitError(err error, cmd string) string {
	if err == nil {
		return "an unexpected reply"
	}
	msg := err.Error()
	switch {
	case strings.HasPrefix(msg, "NOPERM"):
		return fmt.Sprintf("the ACL refuses %s: grant +%s (docs/acl-roles.md)", strings.ToUpper(cmd), cmd)
	case strings.Contains(strings.ToLower(msg), "unknown command"):
		return strings.ToUpper(cmd) + " is not known to this server (WAITAOF needs Redis or Valkey 7.2 or later)"
	case errors.Is(err, context.DeadlineExceeded):
		return "no answer in time"
	}
	return msg
}

// aofEnabled reads INFO persistence; unknown (no +info) counts as off.
func aofEnabled(ctx context.Context, c *redis.Conn) bool {
	info, err := c.Info(ctx, "persistence").Result()
	return err == nil && infoField(info, "aof_enabled") == "1"
}

// onlineReplicas counts, from INFO replication, the replicas in sync
// (state=online): one still loading its first copy cannot acknowledge, so
// a primary just promoted has none to wait for yet. A server that does
// not report its replicas gives an error.
func onlineReplicas(ctx context.Context, c interface {
	Info(ctx context.Context, section ...string) *redis.StringCmd
}) (int, error) {
	info, err := c.Info(ctx, "replication").Result()
	if err != nil {
		return 0, err
	}
	if infoField(info, "connected_slaves") == "" {
		return 0, errors.New("its INFO has no replication section")
	}
	n := 0
	for i := 0; ; i++ {
		v := infoField(info, "slave"+strconv.Itoa(i))
		if v == "" {
			return n, nil
		}
		if strings.Contains(v, "state=online") {
			n++
		}
	}
}

func infoField(info, name string) string {
	for _, l := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(l), name+":"); ok {
			return v
		}
	}
	return ""
}
