package inspect

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// The timeline keeps the latest minutes whatever order the records come
// in, and counts every other stale record as earlier: the same as
// bucketing them all and cutting.
func TestTimelineKeepsTheLatestMinutes(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	const now = 1_765_000_000_000
	var tl timeline
	all := map[int64]int64{}
	eps := []string{"POST:/a", "POST:/b", "PUT:/c"}
	byEp := map[int64]map[string]int64{}
	for range 20_000 {
		age := rng.Int64N(90 * 60_000)
		ep := eps[rng.IntN(len(eps))]
		tl.add(now, age, "endpoint", ep)
		m := (now - age) / 60_000
		all[m]++
		if byEp[m] == nil {
			byEp[m] = map[string]int64{}
		}
		byEp[m][ep]++
	}
	tl.add(now, -1, "endpoint", "POST:/a")
	r := tl.report()
	var minutes []int64
	for m := range all {
		minutes = append(minutes, m)
	}
	slices.Sort(minutes)
	keep := minutes[len(minutes)-TimelineMinutes:]
	var earlier int64
	for _, m := range minutes[:len(minutes)-TimelineMinutes] {
		earlier += all[m]
	}
	if len(r.Minutes) != TimelineMinutes || r.Earlier != earlier || r.AgeUnknown != 1 {
		t.Fatalf("%d minutes, earlier %d, age unknown %d; want %d, %d, 1", len(r.Minutes), r.Earlier, r.AgeUnknown, TimelineMinutes, earlier)
	}
	for i, m := range r.Minutes {
		if m.Minute.UnixMilli() != keep[i]*60_000 || m.Stale != all[keep[i]] {
			t.Errorf("minute %d: %s %d; want %d %d", i, m.Minute, m.Stale, keep[i], all[keep[i]])
		}
		if len(m.Top) != timelineTop || m.Top[0].Count < m.Top[1].Count || m.Top[0].Count != byEp[keep[i]][string(m.Top[0].Value)] {
			t.Errorf("minute %d: top %+v, counts %v", i, m.Top, byEp[keep[i]])
		}
	}
}
