package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/spf13/pflag"

	"github.com/idemctl/idemctl/cli/docgen"
	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/internal/appsim"
	"github.com/idemctl/idemctl/internal/redisconn"
	"github.com/idemctl/idemctl/internal/units"
)

// seedCmd holds seed's flags.
type seedCmd struct {
	cf                          connFlags
	count                       int
	preset                      string
	reserve, timeout, retention time.Duration
	large                       int64
	randSeed                    uint64
	force, fieldTTL, quiet      bool
}

// flags registers seed's flags.
func (o *seedCmd) flags(fs *pflag.FlagSet) {
	fs.IntVar(&o.count, "count", 1000, "records to write")
	fs.StringVar(&o.preset, "preset", "atlasmart", "record format to write: atlasmart or setnx")
	fs.Var(durationValue(&o.reserve), "reserve-ttl", "TTL the reserve step sets (default: the preset's, raised to 1h or more so that stale records live 30m at least); scan with the same")
	fs.Var(durationValue(&o.timeout), "processing-timeout", "timeout the stale records are past (default: the preset's)")
	fs.Var(durationValue(&o.retention), "retention", "TTL the complete step sets: how long completed records live (default: the preset's)")
	fs.Var(sizeValue(&o.large), "large-response", "threshold the large responses exceed (default 16KiB)")
	fs.Uint64Var(&o.randSeed, "rand-seed", 1, "random seed (same seed, same records)")
	fs.BoolVar(&o.force, "force", false, "allow a non-loopback server")
	fs.BoolVar(&o.fieldTTL, "field-ttl", false, "put each record's TTL on its fields instead of its key (HPEXPIRE; Redis 7.4+, atlasmart)")
	fs.BoolVar(&o.quiet, "quiet", false, "no progress line on stderr (there is none unless stderr is a terminal)")
	registerGroup(fs, docgen.GroupConnection, o.cf.register)
}

// resolveFlags records which connection flags were given.
func (o *seedCmd) resolveFlags(fs *pflag.FlagSet) { o.cf.resolveFlags(fs) }

func (o *seedCmd) run(ctx context.Context, a *app, _ []string) error {
	if o.count <= 0 {
		return usageErr("--count must be positive")
	}
	schema, err := inspect.Preset(o.preset)
	if err != nil {
		return usageErr("%v", err)
	}
	timeout := firstDur(o.timeout, schema.Defaults.ProcessingTimeout.D())
	plan := appsim.Plan{
		Schema: o.preset, Count: o.count, RandSeed: o.randSeed,
		ReserveTTL: firstDur(o.reserve, appsim.DefaultReserveTTL(schema.Defaults.ReserveTTL.D(), timeout)), ProcessingTimeout: timeout,
		Retention: firstDur(o.retention, schema.Defaults.Retention.D()), LargeResponse: o.large, FieldTTL: o.fieldTTL,
	}
	if plan.LargeResponse <= 0 {
		plan.LargeResponse = inspect.DefaultLargeResponse
	}
	s, err := a.openSession(ctx, sessionSpec{conn: &o.cf}) // dialled once the address is checked
	if err != nil {
		return err
	}
	defer s.Close()
	// Checked before connecting: a refused seed sends nothing anywhere.
	if !o.force && !redisconn.IsLoopback(s.ep.Addr) {
		return codeErr(ExitRefused, "refusing to seed %s: not a loopback address (seed writes test data; pass --force if you mean it)", s.ep.Addr)
	}
	if err := s.connect(ctx, a); err != nil {
		return err
	}
	progress, started := a.newProgress("seed", o.quiet), time.Now()
	plan.Progress = func(written int) {
		progress.update(inspect.Progress{Done: float64(written) / float64(o.count), Records: int64(written), Elapsed: time.Since(started)})
	}
	res, err := appsim.Seed(ctx, s.client, plan)
	progress.clear()
	if err != nil && ctx.Err() == nil {
		return fmt.Errorf("seed %s: %w", s.ep, err)
	}
	enc := json.NewEncoder(a.stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(res); err != nil {
		return err
	}
	if ctx.Err() != nil {
		// Ctrl-C: what was written is above (kinds, written); the expected
		// counts are for a whole run only.
		return codeErr(ExitInterrupt, "interrupted after writing %s of %s records", units.FormatCount(int64(res.Written)), units.FormatCount(int64(o.count)))
	}
	seedNote(a, plan, res, schema.Defaults.ReserveTTL.D())
	return nil
}

// seedNote says on stderr how long the stale records live, and, when
// seed's reserve TTL is not the preset's, that a scan must be told it: a
// processing record's age is its reserve TTL less the TTL it has left.
func seedNote(a *app, plan appsim.Plan, res appsim.Result, presetReserve time.Duration) {
	stale := res.Kinds[appsim.KindStale]
	if stale == 0 {
		return
	}
	first, last := plan.StaleTTL()
	note := fmt.Sprintf("idemctl: seed: %s stale records, expiring %s to %s from now", units.FormatCount(stale),
		first.Round(time.Second), last.Round(time.Second))
	if plan.ReserveTTL != presetReserve {
		note += fmt.Sprintf("; judge their age by the reserve TTL they were written with: --reserve-ttl %s, or reserve_ttl: %s in the keyspace",
			units.ConfigDuration(plan.ReserveTTL), units.ConfigDuration(plan.ReserveTTL))
	}
	fmt.Fprintln(a.stderr, note)
}
