package inspect

import (
	"testing"
	"time"

	"github.com/idemctl/idemctl/inspect/dedup"
	"github.com/idemctl/idemctl/inspect/topology"
)

func TestDedupEstimate(t *testing.T) {
	standalone, quarter := topology.Node{}, topology.Node{NSlots: topology.ClusterSlots / 4}
	for _, c := range []struct {
		name  string
		opt   Options
		n     topology.Node
		keys  int64
		share float64
		want  int64
	}{
		{"too early", Options{}, standalone, 100, 0.001, 0},
		{"whole", Options{}, standalone, 40_000, 0.004, 10_000_000},
		{"enough keys", Options{}, standalone, dedup.PlanKeys, 0.001, dedup.PlanKeys * 1000},
		{"one of four nodes", Options{}, quarter, 40_000, 0.004, 40_000_000},
		{"sample", Options{Sample: 0.01}, standalone, 40_000, 0.004, 100_000},
		{"max keys", Options{MaxKeys: 50_000}, standalone, 40_000, 0.004, 50_000},
		{"sample time", Options{SampleTime: 10 * time.Second}, standalone, 40_000, 0.004, 400_000},
	} {
		if got := dedupEstimate(c.opt, c.n, c.keys, c.share, time.Second); got != c.want {
			t.Errorf("%s: %d, want %d", c.name, got, c.want)
		}
	}
}
