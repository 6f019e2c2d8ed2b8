package cli_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/idemctl/idemctl/internal/testkit/clitest"
	"github.com/idemctl/idemctl/internal/testkit/redistest"
)

// The README promises the incident timeline from idemctl stats: the stale
// records by the minute they were reserved, with the endpoints holding the
// most, in the table and in -o json, live and from a snapshot.
func TestStatsIncidentTimeline(t *testing.T) {
	srv, c := redistest.SharedClient(t)
	ctx := context.Background()
	if err := c.FlushAll(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	// atlasmart derives a processing record's age from its TTL: reserved
	// at expiry - reserve TTL. Each expiry is set to the middle of a
	// minute, so the record's minute is exact.
	const reserveTTL = time.Hour
	now, err := c.Time(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	base := now.Truncate(time.Minute)
	reserve := func(key string, minutesAgo int) {
		reserved := base.Add(-time.Duration(minutesAgo)*time.Minute + 30*time.Second)
		c.HSet(ctx, key, "fingerprint", "fp", "state", "PROCESSING")
		if err := c.PExpireAt(ctx, key, reserved.Add(reserveTTL)).Err(); err != nil {
			t.Fatal(err)
		}
	}
	for i, r := range []struct {
		endpoint string
		ago      int
	}{
		{"POST:/v2/pay", 20}, {"POST:/v2/pay", 20}, {"POST:/v2/pay", 20}, {"PUT:/v2/orders", 20},
		{"PUT:/v2/orders", 12}, {"PUT:/v2/orders", 12}, {"POST:/v2/pay", 12},
		{"POST:/v2/pay", 5},
	} {
		reserve("atlasmart:ch23:idem:cust-"+string(rune('a'+i))+":"+r.endpoint+":req-1", r.ago)
	}
	reserve("atlasmart:ch23:idem:cust-z:POST:/v2/pay:req-2", 0) // not stale yet: no minute
	timing := []string{"--preset", "atlasmart", "--reserve-ttl", "1h", "--processing-timeout", "2m"}

	// The minutes carry their date when they span midnight (UTC).
	layout := "15:04"
	if base.Add(-20*time.Minute).UTC().YearDay() != base.Add(-5*time.Minute).UTC().YearDay() {
		layout = "01-02 15:04"
	}
	row := func(ago int, rest string) string {
		return fmt.Sprintf("%-*s %s", max(len(layout), len("earlier")), base.Add(-time.Duration(ago)*time.Minute).UTC().Format(layout), rest)
	}
	rows := []string{
		row(20, "      4  ██████████ POST:/v2/pay 3 · PUT:/v2/orders 1"),
		row(12, "      3  ███████    PUT:/v2/orders 2 · POST:/v2/pay 1"),
		row(5, "      1  ██         POST:/v2/pay 1"),
	}
	path := srv.Snapshot(t)
	for _, src := range [][]string{{"--url", srv.URL(0)}, {"--rdb", path}} {
		clock := "server clock"
		if src[0] == "--rdb" {
			clock = "snapshot clock"
		}
		table := clitest.Run(t, nil, append(append([]string{"stats", "-o", "table"}, src...), timing...)...)
		table.MustCode(t, 0)
		_, section, _ := strings.Cut(table.Stdout, "STALE BY MINUTE RESERVED ("+clock+", UTC; top endpoint)\n")
		section, _, _ = strings.Cut(section, "\n\n")
		if got := strings.Split(section, "\n"); strings.Join(got, "\n") != strings.Join(rows, "\n") {
			t.Errorf("stats %s: the timeline reads\n%s\nwant\n%s\n(all: %s)", src[0], section, strings.Join(rows, "\n"), table.Stdout)
		}

		js := clitest.Run(t, nil, append(append([]string{"stats", "-o", "json"}, src...), timing...)...)
		js.MustCode(t, 0)
		var rep struct {
			Stale    int64 `json:"stale"`
			Timeline struct {
				Minutes []struct {
					Minute time.Time `json:"minute"`
					Stale  int64     `json:"stale"`
					Top    []struct {
						Capture, Value string
						Count          int64
					} `json:"top"`
				} `json:"minutes"`
				Earlier    int64 `json:"earlier"`
				AgeUnknown int64 `json:"age_unknown"`
			} `json:"incident_timeline"`
		}
		if err := json.Unmarshal([]byte(js.Stdout), &rep); err != nil {
			t.Fatal(err)
		}
		tl := rep.Timeline
		if rep.Stale != 8 || len(tl.Minutes) != 3 || tl.Earlier != 0 || tl.AgeUnknown != 0 ||
			!tl.Minutes[0].Minute.Equal(base.Add(-20*time.Minute)) || tl.Minutes[0].Stale != 4 ||
			tl.Minutes[0].Top[0].Capture != "endpoint" || tl.Minutes[0].Top[0].Value != "POST:/v2/pay" || tl.Minutes[0].Top[0].Count != 3 ||
			tl.Minutes[2].Stale != 1 {
			t.Errorf("stats %s -o json: %d stale, timeline %+v", src[0], rep.Stale, tl)
		}
	}
}
