package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/idemctl/idemctl/inspect"
)

// verify runs scan and stats once, untimed, and checks they saw every
// record and classified them as the seed says they must.
func (h *harness) verify(ctx context.Context) error {
	var out bytes.Buffer
	r, err := h.runIdemctl(ctx, &out, h.idemctlArgs("stats", "--output", "json")...)
	if err != nil {
		return err
	}
	var rep inspect.Report
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		return fmt.Errorf("stats output: %v", err)
	}
	if !rep.Complete {
		return errors.New("stats: scan not complete")
	}
	if m := h.res.Seed.Expected.Mismatches(rep.Total, rep.Stale, rep.ByState, rep.Flags); len(m) > 0 {
		return fmt.Errorf("stats: %s", strings.Join(m, "; "))
	}
	h.verified, h.verifiedWall = &rep, r.Wall
	h.cfg.logf("verified stats (%v): %d records, %d stale, as seeded", r.Wall.Round(time.Millisecond), rep.Total, rep.Stale)

	lc := &lineCounter{}
	r, err = h.runIdemctl(ctx, lc, h.idemctlArgs("scan", "--output", "ndjson")...)
	if err != nil {
		return err
	}
	if lc.lines != int64(h.cfg.N) {
		return fmt.Errorf("scan --output ndjson printed %d lines, want %d", lc.lines, h.cfg.N)
	}
	h.res.NDJSONBytes = lc.bytes
	h.cfg.logf("verified scan (%v): %d lines, %.0f MB of NDJSON", r.Wall.Round(time.Millisecond), lc.lines, float64(lc.bytes)/1e6)
	return nil
}

type lineCounter struct{ lines, bytes int64 }

func (c *lineCounter) Write(p []byte) (int, error) {
	c.lines += int64(bytes.Count(p, []byte{'\n'}))
	c.bytes += int64(len(p))
	return len(p), nil
}
