package ledger

import (
	"cmp"
	"slices"
)

// Key is one ledger key as read: a zset or one period's set. Key is
// Redis's text: Sanitize it before it reaches a terminal.
type Key struct {
	Key         string `json:"key"`
	Type        string `json:"type"` // zset or set
	Members     int64  `json:"members"`
	MemoryBytes int64  `json:"memory_bytes"` // -1: MEMORY USAGE unavailable
	TTLms       int64  `json:"ttl_ms"`       // -1: no TTL
	// Ages of the oldest and newest entry at the server's time: a zset's
	// lowest and highest scores, a set's period start and end. AgeKnown is
	// false when the scores are not epoch times or the name has no period.
	OldestAgeMs int64 `json:"oldest_age_ms"`
	NewestAgeMs int64 `json:"newest_age_ms"`
	AgeKnown    bool  `json:"age_known"`
	// PastWindow counts the entries older than the window: ZCOUNT below
	// the cutoff, or a whole set whose period started before it.
	PastWindow int64 `json:"past_window"`
	// OlderThan counts entries older than 1, 2 and 10 windows.
	OlderThan [len(Bands)]int64 `json:"older_than"`
	Period    string            `json:"period,omitempty"` // set: the {period} capture
	// NotTimes: a zset whose scores are no epoch times in the ledger's
	// unit (before 2000 or more than a day ahead of the server's clock).
	NotTimes bool `json:"not_times,omitempty"`
}

// Bands are the age bands of a ledger's histogram, in windows.
var Bands = [...]int64{1, 2, 10}

// Band is one band of the age histogram.
type Band struct {
	Windows int64 `json:"windows"` // older than this many windows
	AgeMs   int64 `json:"age_ms"`
	Entries int64 `json:"entries"`
}

// Report aggregates one ledger keyspace.
type Report struct {
	Name        string `json:"name"`
	Shape       string `json:"shape"`
	Match       string `json:"match"`
	WindowMs    int64  `json:"window_ms"`
	ScoreUnit   string `json:"score_unit,omitempty"` // zset: what a score counts
	NowMs       int64  `json:"now_ms"`               // the server's clock at the last batch
	Keys        int64  `json:"keys"`
	Members     int64  `json:"members"`
	MemoryBytes int64  `json:"memory_bytes"`   // summed over keys whose memory is known
	MemoryKnown int64  `json:"memory_known"`   // keys whose MEMORY USAGE was read
	OldestAgeMs int64  `json:"oldest_age_ms"`  // the oldest entry of any key
	NewestAgeMs int64  `json:"newest_age_ms"`  // the newest entry of any key
	AgeKnown    int64  `json:"age_known_keys"` // keys whose ages are known
	PastWindow  int64  `json:"past_window"`
	NoTTL       int64  `json:"no_ttl_sets"`       // period sets without a TTL
	PeriodsPast int64  `json:"periods_past"`      // period sets older than the window
	NoPeriod    int64  `json:"no_period_sets"`    // sets whose name gives no period
	NotTimes    int64  `json:"not_time_zsets"`    // zsets whose scores are no times
	Bands       []Band `json:"bands"`             // entries by age, in windows
	Details     []Key  `json:"details"`           // the oldest keys first, at most DetailCap
	Truncated   bool   `json:"details_truncated"` // more keys than Details holds
	Complete    bool   `json:"complete"`          // every node scanned end to end
	Nodes       int    `json:"nodes"`             // nodes scanned
	Commands    int64  `json:"commands"`          // commands sent, SCAN and TIME included
	Err         string `json:"error,omitempty"`
}

// DetailCap bounds the keys a report lists: the aggregate counts
// every key, the list keeps the oldest.
const DetailCap = 1000

func newReport(l *Ledger) Report {
	r := Report{Name: l.Name, Shape: l.Shape, Match: l.Match, WindowMs: l.Window.Milliseconds(), ScoreUnit: l.ScoreUnit, Details: []Key{}}
	for _, w := range Bands {
		r.Bands = append(r.Bands, Band{Windows: w, AgeMs: w * r.WindowMs})
	}
	return r
}

// add folds one key in.
func (r *Report) add(k Key) {
	r.Keys++
	r.Members += k.Members
	if k.MemoryBytes >= 0 {
		r.MemoryBytes += k.MemoryBytes
		r.MemoryKnown++
	}
	if k.Type == "set" && k.TTLms == -1 {
		r.NoTTL++
	}
	switch {
	case k.NotTimes:
		r.NotTimes++
	case !k.AgeKnown && k.Type == "set":
		r.NoPeriod++
	}
	if k.AgeKnown {
		if r.AgeKnown == 0 || k.NewestAgeMs < r.NewestAgeMs {
			r.NewestAgeMs = k.NewestAgeMs
		}
		r.OldestAgeMs = max(r.OldestAgeMs, k.OldestAgeMs)
		r.AgeKnown++
		r.PastWindow += k.PastWindow
		if k.Type == "set" && k.PastWindow > 0 {
			r.PeriodsPast++
		}
		for i := range r.Bands {
			r.Bands[i].Entries += k.OlderThan[i]
		}
	}
	r.Details = append(r.Details, k)
	if len(r.Details) >= 2*DetailCap {
		r.trimDetails()
	}
}

// trimDetails keeps the DetailCap oldest keys, oldest first.
func (r *Report) trimDetails() {
	slices.SortFunc(r.Details, func(a, b Key) int {
		if a.AgeKnown != b.AgeKnown {
			if a.AgeKnown {
				return -1
			}
			return 1
		}
		return cmp.Or(cmp.Compare(b.OldestAgeMs, a.OldestAgeMs), cmp.Compare(a.Key, b.Key))
	})
	if len(r.Details) > DetailCap {
		r.Details, r.Truncated = r.Details[:DetailCap:DetailCap], true
	}
}
