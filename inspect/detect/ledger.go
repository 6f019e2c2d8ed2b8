package detect

import (
	"context"

	"github.com/idemctl/idemctl/inspect/ledger"
)

// proposeLedger proposes a ledger keyspace when most sampled keys are
// zsets or sets; nil otherwise, or on a snapshot (its scores are not read).
func proposeLedger(ctx context.Context, smp detectSample, types map[string]int, keys []string) *ledger.Proposal {
	live, ok := smp.(*liveSample)
	if !ok || (types["zset"]+types["set"])*2 < len(keys) {
		return nil
	}
	return ledger.Propose(ctx, live.c, keys)
}
