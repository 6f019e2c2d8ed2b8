package follow

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/idemctl/idemctl/inspect/topology"
)

// A cluster's primaries change with a failover (a replica promoted) and
// with nodes added: every primary must be watched, or the changes on it
// are missed in silence. The watched set is checked against the cluster's
// every topologyEvery, and at once when a watched node turns replica.

const topologyEvery = 5 * time.Second

func (f *Follower) cluster() bool {
	_, ok := f.c.(*redis.ClusterClient)
	return ok
}

// startWatch registers and starts ep's watcher.
func (f *Follower) startWatch(ctx context.Context, ep endpoint, wc *watchConn) {
	f.wmu.Lock()
	f.watched[ep.addr] = true
	f.wmu.Unlock()
	f.wg.Add(1)
	go f.watch(ctx, ep, wc)
}

// forget drops a watcher that gave up (its node is a replica now) and
// asks for the primaries to be discovered again.
func (f *Follower) forget(addr string) {
	f.wmu.Lock()
	delete(f.watched, addr)
	f.wmu.Unlock()
	f.down.Add(-1)
	f.rediscover.Store(true)
	f.pend.missed(addr, "no longer a primary: watching the cluster's primaries again")
}

// checkTopology watches every primary not yet watched (a cluster only),
// when asked or every topologyEvery; a primary it cannot watch yet is a
// miss, tried again.
func (f *Follower) checkTopology(ctx context.Context) {
	if !f.cluster() || (!f.rediscover.Swap(false) && time.Since(f.topoAt) < topologyEvery) {
		return
	}
	f.topoAt = time.Now()
	if cc, ok := f.c.(*redis.ClusterClient); ok {
		cc.ReloadState(ctx)
	}
	prims, err := topology.Primaries(ctx, f.c)
	if err != nil {
		f.rediscover.Store(true)
		f.pend.missed("cluster", fmt.Sprintf("cannot list the primaries: %v", err))
		return
	}
	for _, p := range prims {
		f.wmu.Lock()
		known := f.watched[p.Addr]
		f.wmu.Unlock()
		if known {
			continue
		}
		ep, err := endpointOf(p.Addr, p.Client)
		var wc *watchConn
		if err == nil {
			wc, err = openWatch(ctx, ep, f.spec)
		}
		if err != nil {
			f.rediscover.Store(true)
			f.pend.missed(p.Addr, fmt.Sprintf("cannot watch the new primary: %v", err))
			continue
		}
		f.pend.missed(p.Addr, "a primary joined the watch (failover or new node)")
		f.startWatch(ctx, ep, wc)
	}
}
