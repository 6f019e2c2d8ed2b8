package acceptance

import (
	"strconv"
	"strings"
	"testing"

	"github.com/idemctl/idemctl/internal/testkit/clitest"
	"github.com/idemctl/idemctl/internal/testkit/redistest"
)

// Issue 48: the real binary in tmux follows a real server after its
// first scan: the header says LIVE, the scan line the mode, and a
// deleted record leaves the count at once, with no --refresh.
func TestTUIFollowsLiveInTmux(t *testing.T) {
	bin := clitest.BuildBinary(t)
	srv, c := redistest.OwnClient(t)
	url := srv.URL(0)
	timing := " --reserve-ttl 1h --processing-timeout 10m"
	out, err := clitest.Command(t, bin, append([]string{"seed", "--url", url, "--count", "200"}, strings.Fields(timing)...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("seed: %v\n%s", err, out)
	}
	s := newTmux(t, 100, 24, bin+" ui --url "+url+" --preset atlasmart --match 'atlasmart:ch23:idem:*'"+timing+"; echo EXITED:$?; sleep 60")
	s.waitFor("live", "LIVE", "live (tracking)", "✓ 200 records")
	if scr := s.screen(); strings.Contains(scr, "NOT LIVE") {
		t.Fatalf("the header says NOT LIVE once live:\n%s", scr)
	}
	keys, err := c.Keys(t.Context(), "atlasmart:ch23:idem:*").Result()
	if err != nil || len(keys) < 3 {
		t.Fatalf("keys: %v (%d)", err, len(keys))
	}
	c.Del(t.Context(), keys[:3]...)
	s.waitFor("three records gone, with no refresh", "✓ "+strconv.Itoa(200-3)+" records", "live (tracking)")
	s.send("q")
	s.waitFor("quit", "EXITED:0")
}
