package common

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/idemctl/idemctl/actions"
	"github.com/idemctl/idemctl/doctor"
	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/inspect/follow"
	"github.com/idemctl/idemctl/inspect/lookup"
	"github.com/idemctl/idemctl/inspect/streams"
	"github.com/idemctl/idemctl/verify"
)

// Options is what the TUI needs from main: a connected client, the
// keyspaces, and the context shown in the header.
type Options struct {
	Client    redis.UniversalClient
	Keyspaces []*inspect.Keyspace
	Scan      inspect.Options
	Profile   string
	Address   string // already redacted
	User      string
	Demo      bool
	Refresh   time.Duration // 0: rescan only on r
	// Follow keeps the view live after the first complete scan of a live
	// server (inspect/follow); --refresh passes only where it cannot.
	Follow     bool
	FollowMode follow.Mode // ModeAuto: tracking, else notifications, else periodic
	NoColor    bool
	Now        func() time.Time // tests fix the clock
	// Executor performs guarded writes, and its policy decides whether the
	// write keys exist at all: nil, or writes off, is a read-only session
	// (and actions/ refuses on its own anyway).
	Executor *actions.Executor
	// Reveal shows response payloads without pressing v (they can carry
	// personal data, so they are hidden by default).
	Reveal bool
	// Doctor, when set, judges doctor's rules after each complete scan for
	// the Doctor screen.
	Doctor *doctor.Options
	// OpenProfile, when set, resolves and connects another profile of the
	// config for :profile NAME: its server, keyspaces, scan settings and
	// write policy, and a func that releases them. The UI's own settings
	// (colours, refresh, reveal) stay.
	OpenProfile func(ctx context.Context, name string) (Options, func(), error)
	// Notice is what opening the session had to say (a warning, such as a
	// verify hook that cannot run), shown as a banner for the session.
	Notice string
	// Hooks are the keyspaces' verify hooks, by keyspace name, for V
	// (triage); they run only in a session that can write.
	Hooks map[string]*verify.Hook
	// MaxRecords bounds the records the table holds (0: ui.DefaultMaxRecords);
	// past it, every processing, stale or flagged record is still kept and
	// the rest are counted in Overview and Stats only, and every screen
	// says so.
	MaxRecords int
	// StreamSpaces are the profile's kind: stream keyspaces, for the
	// Streams screen (:streams) and the Overview's line on them.
	StreamSpaces []*streams.Space
	// FindSettings fills what a keyspace's library was configured with
	// (Powertools' JMESPath and hash settings, the function name, the
	// fastapi secret) into :find's inputs, as 'idemctl find' does; nil:
	// the inputs alone.
	FindSettings func(keyspace string, in *lookup.Inputs) error
}
