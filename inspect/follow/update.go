package follow

import (
	"time"

	"github.com/idemctl/idemctl/inspect"
)

// Mode is how the view learns what changed.
type Mode uint8

const (
	ModeAuto Mode = iota // Options only: tracking, else notifications, else periodic
	ModeTracking
	ModeNotifications
	ModePeriodic
)

var modeNames = [...]string{"auto", "tracking", "notifications", "periodic"}

func (m Mode) String() string {
	if int(m) < len(modeNames) {
		return modeNames[m]
	}
	return "unknown"
}

// ParseMode maps a mode's name to the Mode.
func ParseMode(s string) (Mode, bool) {
	for i, n := range modeNames {
		if n == s {
			return Mode(i), true
		}
	}
	return ModeAuto, false
}

// Kind says what an Update is.
type Kind uint8

const (
	KindUpsert     Kind = iota + 1 // Record was read (new or changed)
	KindRemove                     // Key was deleted or expired (or not seen by a re-sync)
	KindStale                      // Record's processing deadline passed: it is stale now
	KindResync                     // the view may be missing changes (Reason): a full pass starts
	KindResyncDone                 // the pass completed: the view is Live again
	KindMode                       // the mode was chosen (Reason: why)
)

var kindNames = [...]string{"", "upsert", "remove", "stale", "resync", "resync-done", "mode"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "unknown"
}

// Summary is what the view holds for a key: enough for counts.
type Summary struct {
	Known bool // false: the key was not in the view
	State inspect.State
	Stale bool
}

// Update is one change of the view.
type Update struct {
	Kind Kind
	At   time.Time
	Mode Mode
	// Live is false while the view may be missing changes (from a
	// KindResync until its KindResyncDone, and before the first pass
	// completes).
	Live bool
	// Record: KindUpsert and KindStale (then with inspect.FlagStale set
	// and its age advanced to At).
	Record inspect.Record
	// Key and Keyspace: KindUpsert, KindRemove, KindStale.
	Key      string
	Keyspace *inspect.Keyspace
	// Was is what the view held for Key before this update.
	Was Summary
	// Reason: KindResync (why the view may be missing changes) and
	// KindMode (why this mode, when not tracking).
	Reason string
	// Records: KindResyncDone, how many the view holds.
	Records int
}
