package redistest

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"
)

// OwnWithReplica starts a primary and one replica of it, and waits until
// the primary counts the replica in sync (online) and the replica's link
// is up.
// Both stop when the test ends.
func OwnWithReplica(t testing.TB) (primary, replica *Server) {
	t.Helper()
	primary = Own(t)
	replica = Own(t, "--replicaof", "127.0.0.1", strconv.Itoa(primary.Port))
	pc, rc := primary.Client(0), replica.Client(0)
	defer pc.Close()
	defer rc.Close()
	ctx := context.Background()
	pollUntil(t, time.Now().Add(20*time.Second), "the replica never linked to its primary", func() (bool, error) {
		p, err := pc.Info(ctx, "replication").Result()
		if err != nil {
			return false, err
		}
		r, err := rc.Info(ctx, "replication").Result()
		// online: the primary has the replica's first acknowledgement
		return strings.Contains(p, "connected_slaves:1") && strings.Contains(p, "state=online") && strings.Contains(r, "master_link_status:up"), err
	})
	return primary, replica
}
