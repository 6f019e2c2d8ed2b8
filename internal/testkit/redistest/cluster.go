package redistest

import (
	"context"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Cluster is a local Redis Cluster of real redis-server processes.
type Cluster struct {
	Nodes    []*Server
	replicas int // per primary, as started
}

// Addrs lists every node's address.
func (c *Cluster) Addrs() []string { return addrs(c.Nodes) }

func addrs(servers []*Server) []string {
	out := make([]string, len(servers))
	for i, n := range servers {
		out[i] = n.Addr
	}
	return out
}

// Client returns a cluster client seeded with every node.
func (c *Cluster) Client() *redis.ClusterClient {
	return redis.NewClusterClient(&redis.ClusterOptions{Addrs: c.Addrs(), DisableIdentity: true})
}

// Node returns the server listening on addr.
func (c *Cluster) Node(addr string) *Server {
	for _, n := range c.Nodes {
		if n.Addr == addr {
			return n
		}
	}
	return nil
}

// StartCluster starts primaries×(1+replicas) nodes with cluster-enabled,
// joins them with `redis-cli --cluster create`, and waits until every node
// reports cluster_state:ok. The nodes stop when the test ends.
func StartCluster(t testing.TB, primaries, replicas int) *Cluster {
	t.Helper()
	cli, err := exec.LookPath("redis-cli")
	if err != nil {
		t.Fatal("redis-cli not found in PATH: cluster tests need it; install it with `apt-get install -y redis-tools` (it comes with redis-server)")
	}
	c := &Cluster{replicas: replicas}
	for range primaries * (1 + replicas) {
		s := Own(t, "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
			"--cluster-node-timeout", "1500", "--cluster-require-full-coverage", "no")
		c.Nodes = append(c.Nodes, s)
	}
	args := append([]string{"--cluster", "create"}, c.Addrs()...)
	args = append(args, "--cluster-replicas", strconv.Itoa(replicas), "--cluster-yes")
	if out, err := exec.Command(cli, args...).CombinedOutput(); err != nil {
		t.Fatalf("redis-cli --cluster create: %v\n%s", err, out)
	}
	deadline := time.Now().Add(30 * time.Second)
	for _, n := range c.Nodes {
		cl := n.Client(0)
		for {
			info, err := cl.ClusterInfo(context.Background()).Result()
			if err == nil && strings.Contains(info, "cluster_state:ok") && strings.Contains(info, "cluster_known_nodes:"+strconv.Itoa(len(c.Nodes))) {
				break
			}
			if time.Now().After(deadline) {
				cl.Close()
				t.Fatalf("cluster node %s not ready: %v %s", n.Addr, err, info)
			}
			time.Sleep(100 * time.Millisecond)
		}
		cl.Close()
	}
	// Replicas must have synced before tests read from them.
	WaitClusterReplicasSynced(t, c, 30*time.Second)
	return c
}

// WaitClusterReplicasSynced waits until every replica's link to its
// primary is up and every primary counts its replicas online: a primary
// marks a diskless-synced replica online only at the replica's first
// acknowledgement, a moment after the replica already says its link is up,
// and a WAIT in between counts none.
func WaitClusterReplicasSynced(t testing.TB, c *Cluster, limit time.Duration) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for _, n := range c.Nodes {
		cl := n.Client(0)
		pollUntil(t, deadline, "replica "+n.Addr+" never synced", func() (bool, error) {
			info, err := cl.Info(context.Background(), "replication").Result()
			if err != nil {
				return false, err
			}
			if strings.Contains(info, "role:master") {
				return strings.Count(info, "state=online") >= c.replicas, nil
			}
			return strings.Contains(info, "master_link_status:up"), nil
		})
		cl.Close()
	}
}

// pollUntil asks ok every 100 ms until it says yes, and fails the test
// with what and ok's last error once deadline passes.
func pollUntil(t testing.TB, deadline time.Time, what string, ok func() (bool, error)) {
	t.Helper()
	for {
		done, err := ok()
		if done {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %v", what, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
