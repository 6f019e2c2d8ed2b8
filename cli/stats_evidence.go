package cli

import (
	"context"
	"fmt"
	"io"

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

// writeGaps heads the stats table with what its figures cannot back.
func writeGaps(w io.Writer, gaps []inspect.Gap) {
	if len(gaps) == 0 {
		return
	}
	fmt.Fprintln(w, "CANNOT JUDGE")
	for _, g := range gaps {
		fmt.Fprintf(w, "  %s\n    fix: %s\n", g.Message, g.Fix)
	}
	fmt.Fprintln(w)
}
