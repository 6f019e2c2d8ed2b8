// Package topology lists the servers a read visits: a cluster's primaries
// (or one replica per shard), the single server, or a standalone primary's
// replica; the cluster's slot map, to say which slots moved during a
// scan; and what identifies a server process and a replica's lag.
//
// Floor 0 of ARCHITECTURE.md, a foundation: it imports nothing of
// idemctl's.
package topology

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/redis/go-redis/v9"
)

// Node is one server a scan visits: every primary of a cluster (or one
// replica per shard when replicas are asked for), or the single server.
type Node struct {
	Addr    string
	Role    string // primary | replica
	Slots   string // cluster slot ranges served, e.g. "0-5460"
	NSlots  int    // how many (0: not a cluster)
	Primary string // for a replica: its primary's address
	Client  redis.UniversalClient
	Owned   bool // we created it: close after the scan
}

// Primary is one primary a reader visits: its address and a client
// connected to it.
type Primary struct {
	Addr   string
	Client redis.UniversalClient
}

// Primaries lists the primaries a scan would visit, in its order: one per
// shard of a cluster, or the single server. Their clients belong to c:
// nothing to close. Readers of other key types (streams) walk the same
// nodes.
func Primaries(ctx context.Context, c redis.UniversalClient) ([]Primary, error) {
	nodes, _, err := Discover(ctx, c, false)
	if err != nil {
		return nil, err
	}
	out := make([]Primary, len(nodes))
	for i, n := range nodes {
		out[i] = Primary{Addr: n.Addr, Client: n.Client}
	}
	return out, nil
}

// SlotMap is the cluster's slot map at one moment: slot -> primary.
type SlotMap []string

const ClusterSlots = 16384

// Discover lists the nodes to scan.
func Discover(ctx context.Context, c redis.UniversalClient, replicas bool) ([]Node, SlotMap, error) {
	switch cc := c.(type) {
	case *redis.ClusterClient:
		return discoverCluster(ctx, cc, replicas)
	case *redis.Client:
		n := Node{Addr: cc.Options().Addr, Role: "primary", Client: cc}
		if !replicas {
			return []Node{n}, nil, nil
		}
		reps, err := standaloneReplicas(ctx, cc)
		if err != nil || len(reps) == 0 {
			return nil, nil, fmt.Errorf("--read-from-replicas: no replica found on %s (INFO replication: %v)", n.Addr, errOrNone(err))
		}
		opts := *cc.Options()
		opts.Addr = reps[0]
		opts.OnConnect = nil
		return []Node{{Addr: reps[0], Role: "replica", Primary: n.Addr, Client: redis.NewClient(&opts), Owned: true}}, nil, nil
	}
	return []Node{{Addr: "server", Role: "primary", Client: c}}, nil, nil
}

func errOrNone(err error) string {
	if err == nil {
		return "no connected replicas"
	}
	return err.Error()
}

func discoverCluster(ctx context.Context, cc *redis.ClusterClient, replicas bool) ([]Node, SlotMap, error) {
	slots, err := cc.ClusterSlots(ctx).Result()
	if err != nil {
		return nil, nil, fmt.Errorf("CLUSTER SLOTS: %w", err)
	}
	topo := SlotMapOf(slots)
	masters := map[string]*redis.Client{}
	var mu sync.Mutex
	err = cc.ForEachMaster(ctx, func(ctx context.Context, cl *redis.Client) error {
		mu.Lock()
		masters[cl.Options().Addr] = cl
		mu.Unlock()
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	// One node per shard: group slot ranges by primary.
	type shard struct {
		ranges   []string
		nslots   int
		replicas []string
	}
	shards := map[string]*shard{}
	for _, s := range slots {
		if len(s.Nodes) == 0 {
			continue
		}
		p := s.Nodes[0].Addr
		sh := shards[p]
		if sh == nil {
			sh = &shard{}
			shards[p] = sh
		}
		sh.ranges = append(sh.ranges, rangeText(s.Start, s.End))
		sh.nslots += s.End - s.Start + 1
		for _, r := range s.Nodes[1:] {
			sh.replicas = appendUnique(sh.replicas, r.Addr)
		}
	}
	var out []Node
	for p, sh := range shards {
		mc := masters[p]
		if mc == nil {
			return nil, nil, fmt.Errorf("cluster primary %s has no client (SlotMap changing?)", p)
		}
		n := Node{Addr: p, Role: "primary", Slots: strings.Join(sh.ranges, ","), NSlots: sh.nslots, Client: mc}
		if replicas && len(sh.replicas) > 0 {
			opts := *mc.Options()
			opts.Addr = sh.replicas[0]
			// Cluster replicas answer key commands only after READONLY.
			opts.OnConnect = func(ctx context.Context, cn *redis.Conn) error { return cn.ReadOnly(ctx).Err() }
			n = Node{Addr: sh.replicas[0], Role: "replica", Primary: p, Slots: n.Slots, NSlots: n.NSlots, Client: redis.NewClient(&opts), Owned: true}
		}
		out = append(out, n)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Slots < out[j].Slots })
	return out, topo, nil
}

func SlotMapOf(slots []redis.ClusterSlot) SlotMap {
	t := make(SlotMap, ClusterSlots)
	for _, s := range slots {
		if len(s.Nodes) == 0 {
			continue
		}
		for i := max(s.Start, 0); i <= s.End && i < ClusterSlots; i++ {
			t[i] = s.Nodes[0].Addr
		}
	}
	return t
}

func rangeText(a, b int) string {
	if a == b {
		return strconv.Itoa(a)
	}
	return strconv.Itoa(a) + "-" + strconv.Itoa(b)
}

func appendUnique(list []string, s string) []string {
	for _, v := range list {
		if v == s {
			return list
		}
	}
	return append(list, s)
}

// moved describes the slot runs whose primary changed between two
// snapshots ("0-199 127.0.0.1:7000 → 127.0.0.1:7001") and the nodes involved.
func (t SlotMap) Moved(later SlotMap) ([]string, map[string]bool) {
	var out []string
	nodes := map[string]bool{}
	for i := 0; i < ClusterSlots; {
		if t[i] == later[i] {
			i++
			continue
		}
		j := i
		for j+1 < ClusterSlots && t[j+1] == t[i] && later[j+1] == later[i] && t[j+1] != later[j+1] {
			j++
		}
		out = append(out, fmt.Sprintf("%s %s → %s", rangeText(i, j), orGone(t[i]), orGone(later[i])))
		nodes[t[i]], nodes[later[i]] = true, true
		i = j + 1
	}
	return out, nodes
}

func orGone(s string) string {
	if s == "" {
		return "(unassigned)"
	}
	return s
}

// standaloneReplicas reads a primary's connected replicas from INFO replication.
func standaloneReplicas(ctx context.Context, c *redis.Client) ([]string, error) {
	info, err := c.Info(ctx, "replication").Result()
	if err != nil {
		return nil, err
	}
	var out []string
	for _, line := range strings.Split(info, "\n") {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "slave") || !strings.Contains(line, "ip=") {
			continue
		}
		_, kv, _ := strings.Cut(line, ":")
		f := infoFields(kv)
		if f["state"] == "online" {
			out = append(out, f["ip"]+":"+f["port"])
		}
	}
	return out, nil
}

func infoFields(s string) map[string]string {
	m := map[string]string{}
	for _, part := range strings.Split(s, ",") {
		k, v, _ := strings.Cut(part, "=")
		m[k] = v
	}
	return m
}

// infoValue reads one "key:value" line of an INFO section.
func infoValue(info, key string) string {
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), key+":"); ok {
			return v
		}
	}
	return ""
}

// RunID identifies a server process, so a scan can tell that the server it
// walked restarted or failed over under it. "" when INFO is refused.
func RunID(ctx context.Context, c redis.UniversalClient) string {
	info, err := c.Info(ctx, "server").Result()
	if err != nil {
		return ""
	}
	return infoValue(info, "run_id")
}

// ReplicaLag reports how far a replica is behind, from its own INFO.
func ReplicaLag(ctx context.Context, c redis.UniversalClient) string {
	info, err := c.Info(ctx, "replication").Result()
	if err != nil {
		return "unknown"
	}
	status := infoValue(info, "master_link_status")
	io := infoValue(info, "master_last_io_seconds_ago")
	if status != "up" {
		return "link " + status
	}
	return "last I/O " + io + "s ago"
}
