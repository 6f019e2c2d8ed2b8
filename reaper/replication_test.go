package reaper

import (
	"syscall"
	"testing"
	"time"

	"github.com/idemctl/idemctl/internal/testkit/recordtest"
	"github.com/idemctl/idemctl/internal/testkit/redistest"
)

// The reaper's writes wait for the replica like every write: with the
// replica frozen, a cycle's report counts them not replicated, and so
// does idemctl_reap_writes_not_replicated_total.
func TestReaperCountsWritesNotReplicated(t *testing.T) {
	primary, replica := redistest.OwnWithReplica(t)
	c := primary.Client(0)
	defer c.Close()
	writeJobs(t, c, orphans("repl", 3)...)
	if err := syscall.Kill(replica.Pid(), syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	defer syscall.Kill(replica.Pid(), syscall.SIGCONT)
	rp := newReaper(t, c, policy(t, basePolicy, false), true, recordtest.AuditPath(t))
	rp.Exec.Durability.Timeout = 200 * time.Millisecond
	rep := rp.Cycle(t.Context())
	if len(rep.Rules) != 1 || rep.Rules[0].Outcomes["applied"] != 3 || rep.Rules[0].NotReplicated != 3 {
		t.Fatalf("cycle: %+v", rep.Rules)
	}
	if n := counterValue(t, rp.Metrics, ns+"writes_not_replicated_total"); n != 3 {
		t.Fatalf("idemctl_reap_writes_not_replicated_total = %v, want 3", n)
	}
}
