package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/spf13/pflag"

	"github.com/idemctl/idemctl/appsim"
	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/internal/redisconn"
)

// seedCmd holds seed's flags.
type seedCmd struct {
	cf                          connFlags
	count                       int
	preset                      string
	reserve, timeout, retention time.Duration
	large                       int64
	randSeed                    uint64
	force, fieldTTL             bool
}

// flags registers seed's flags.
func (o *seedCmd) flags(fs *pflag.FlagSet) {
	fs.IntVar(&o.count, "count", 1000, "records to write")
	fs.StringVar(&o.preset, "preset", "atlasmart", "record format to write: atlasmart or setnx")
	fs.Var(durationValue(&o.reserve), "reserve-ttl", "TTL the reserve step sets (default: the preset's)")
	fs.Var(durationValue(&o.timeout), "processing-timeout", "timeout the stale records are past (default: the preset's)")
	fs.Var(durationValue(&o.retention), "retention", "TTL the complete step sets (default: the preset's)")
	fs.Var(sizeValue(&o.large), "large-response", "threshold the large responses exceed (default 16KiB)")
	fs.Uint64Var(&o.randSeed, "rand-seed", 1, "random seed (same seed, same records)")
	fs.BoolVar(&o.force, "force", false, "allow a non-loopback server")
	fs.BoolVar(&o.fieldTTL, "field-ttl", false, "put each record's TTL on its fields instead of its key (HPEXPIRE; Redis 7.4+, atlasmart)")
	addGroup(fs, groupConnection, o.cf.register)
}

func (o *seedCmd) run(ctx context.Context, a *app, fs *pflag.FlagSet, _ []string) error {
	if o.count <= 0 {
		return usageErr("--count must be positive")
	}
	schema, err := inspect.Preset(o.preset)
	if err != nil {
		return usageErr("%v", err)
	}
	plan := appsim.Plan{
		Schema: o.preset, Count: o.count, RandSeed: o.randSeed,
		ReserveTTL: firstDur(o.reserve, schema.Defaults.ReserveTTL.D()), ProcessingTimeout: firstDur(o.timeout, schema.Defaults.ProcessingTimeout.D()),
		Retention: firstDur(o.retention, schema.Defaults.Retention.D()), LargeResponse: o.large, FieldTTL: o.fieldTTL,
	}
	if plan.LargeResponse <= 0 {
		plan.LargeResponse = inspect.DefaultLargeResponse
	}
	s, err := a.resolveSession(fs, &o.cf, nil, nil, false)
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
	res, err := appsim.Seed(ctx, s.client, plan)
	if err != nil {
		return fmt.Errorf("seed %s: %w", s.ep, err)
	}
	enc := json.NewEncoder(a.stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(res)
}
