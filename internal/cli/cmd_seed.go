package cli

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/idemctl/idemctl/appsim"
	"github.com/idemctl/idemctl/inspect"
)

func runSeed(ctx context.Context, a *app, args []string) error {
	fs := a.newFlagSet("seed", "[flags]",
		"Fill a Redis with realistic idempotency records, written the way an application\n"+
			"writes them (the lesson's atomic RESERVE/COMPLETE scripts, or SET NX markers):\n"+
			"succeeded, processing, stale processing, processing without TTL, conflicting\n"+
			"reuse and large responses over several principals and endpoints. Prints what it\n"+
			"wrote as JSON, including the counts a correct 'idemctl stats' must report.\n"+
			"Refuses a non-loopback server unless --force.")
	var cf connFlags
	cf.register(fs)
	count := fs.Int("count", 1000, "records to write")
	preset := fs.String("preset", "atlasmart", "record format to write: atlasmart or setnx")
	var reserve, timeout, retention = durationFlag(fs, "reserve-ttl", "TTL the reserve step sets (default: the preset's)"),
		durationFlag(fs, "processing-timeout", "timeout the stale records are past (default: the preset's)"),
		durationFlag(fs, "retention", "TTL the complete step sets (default: the preset's)")
	var large int64
	fs.Var(sizeValue{&large}, "large-response", "threshold the large responses exceed (default 16KiB)")
	randSeed := fs.Uint64("rand-seed", 1, "random seed (same seed, same records)")
	force := fs.Bool("force", false, "allow a non-loopback server")
	fieldTTL := fs.Bool("field-ttl", false, "put each record's TTL on its fields instead of its key (HPEXPIRE; Redis 7.4+, atlasmart)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageErr("unexpected argument %q", fs.Arg(0))
	}
	if *count <= 0 {
		return usageErr("--count must be positive")
	}
	schema, err := inspect.Preset(*preset)
	if err != nil {
		return usageErr("%v", err)
	}
	plan := appsim.Plan{
		Schema: *preset, Count: *count, RandSeed: *randSeed,
		ReserveTTL: firstDur(*reserve, schema.Defaults.ReserveTTL.D()), ProcessingTimeout: firstDur(*timeout, schema.Defaults.ProcessingTimeout.D()),
		Retention: firstDur(*retention, schema.Defaults.Retention.D()), LargeResponse: large, FieldTTL: *fieldTTL,
	}
	if plan.LargeResponse <= 0 {
		plan.LargeResponse = inspect.DefaultLargeResponse
	}
	s, err := a.resolveSession(fs, &cf, nil, nil, false)
	if err != nil {
		return err
	}
	defer s.Close()
	// Checked before connecting: a refused seed sends nothing anywhere.
	if !*force && !isLoopback(s.ep.addr) {
		return codeErr(exitRefused, "refusing to seed %s: not a loopback address (seed writes test data; pass --force if you mean it)", s.ep.addr)
	}
	if err := s.connect(ctx, a); err != nil {
		return err
	}
	res, err := appsim.Seed(ctx, s.client, plan)
	if err != nil {
		return fmt.Errorf("seed %s: %w", s.ep, err)
	}
	enc := json.NewEncoder(a.stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(res)
}
