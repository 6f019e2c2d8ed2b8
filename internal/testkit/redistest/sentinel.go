package redistest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Sentinel is a primary, a replica and three sentinels watching them.
type Sentinel struct {
	Master    string // sentinel master name
	Primary   *Server
	Replica   *Server
	Sentinels []*Server
}

// SentinelAddrs lists the sentinels' addresses.
func (s *Sentinel) SentinelAddrs() []string { return addrs(s.Sentinels) }

// CurrentPrimary asks a sentinel which address is the primary now.
func (s *Sentinel) CurrentPrimary(ctx context.Context) (string, error) {
	for _, sn := range s.Sentinels {
		c := redis.NewSentinelClient(&redis.Options{Addr: sn.Addr})
		addr, err := c.GetMasterAddrByName(ctx, s.Master).Result()
		c.Close()
		if err == nil && len(addr) == 2 {
			return addr[0] + ":" + addr[1], nil
		}
	}
	return "", errors.New("no sentinel answered")
}

// StartSentinel starts the set and waits until the sentinels see the
// primary and its replica. Everything stops when the test ends.
func StartSentinel(t testing.TB) *Sentinel {
	t.Helper()
	bin, err := serverBinary()
	if err != nil {
		t.Fatal(err)
	}
	s := &Sentinel{Master: "idemctl-master"}
	s.Primary = Own(t)
	s.Replica = Own(t, "--replicaof", "127.0.0.1", strconv.Itoa(s.Primary.Port))
	for range 3 {
		sn, err := startWith(bin, func(port int, dir string) []string {
			conf := filepath.Join(dir, "sentinel.conf")
			body := fmt.Sprintf("port %d\nbind 127.0.0.1\ndir %s\nlogfile %s\nsentinel monitor %s 127.0.0.1 %d 2\n"+
				"sentinel down-after-milliseconds %s 1000\nsentinel failover-timeout %s 4000\nsentinel parallel-syncs %s 1\n",
				port, dir, filepath.Join(dir, "redis.log"), s.Master, s.Primary.Port, s.Master, s.Master, s.Master)
			_ = os.WriteFile(conf, []byte(body), 0o600)
			return []string{conf, "--sentinel"}
		})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(sn.Stop)
		s.Sentinels = append(s.Sentinels, sn)
	}
	ctx := context.Background()
	deadline := time.Now().Add(30 * time.Second)
	for _, sn := range s.Sentinels {
		c := redis.NewSentinelClient(&redis.Options{Addr: sn.Addr})
		pollUntil(t, deadline, "sentinel "+sn.Addr+" never saw the set", func() (bool, error) {
			reps, err := c.Replicas(ctx, s.Master).Result()
			if err != nil || len(reps) != 1 {
				return false, err
			}
			others, err := c.Sentinels(ctx, s.Master).Result()
			return len(others) == 2, err
		})
		c.Close()
	}
	return s
}
