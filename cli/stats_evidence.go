package cli

import (
	"context"

	"github.com/idemctl/idemctl/inspect"
)

// fillGaps completes the report's cannot-judge list: a keyspace that
// matched nothing needs the database's key count (one DBSIZE per node).
func fillGaps(ctx context.Context, s *session, rep *inspect.Report) {
	if !rep.MatchedNothing() {
		return
	}
	if s.snap != nil {
		rep.CannotJudge = rep.Gaps(s.snap.Info().DBKeys)
		return
	}
	if n, err := inspect.DBKeys(ctx, s.client); err == nil {
		rep.CannotJudge = rep.Gaps(n)
	}
}
