package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/idemctl/idemctl/actions"
	"github.com/idemctl/idemctl/actions/write"
	"github.com/idemctl/idemctl/inspect"
)

// pinnedHeader says, in comment lines --from-file skips, what the lines
// are pinned to and how to apply them.
func (rw *recordWriter) pinnedHeader(s *session) {
	at := "as each was read"
	if s.snap != nil {
		at = "as of " + s.snap.Info().At.UTC().Format(time.RFC3339)
	}
	fmt.Fprintf(rw.w, "# idemctl scan -o pinned: records of %s, pinned %s (key, state, fingerprint, version)\n", inspect.Line(s.where()), at)
	fmt.Fprintln(rw.w, "# apply with a guarded write on the live server, e.g. idemctl fail --url URL --from-file THIS_FILE:")
	fmt.Fprintln(rw.w, "# a record that changed since in any field, TTL or lock is refused as a conflict")
}

// pinned writes one --from-file line per picked record: its version from
// the snapshot, or read live in one pipeline for the batch.
func (rw *recordWriter) pinned(ctx context.Context, s *session, b inspect.Batch, picked []int) {
	shorts, errs := make([]string, len(picked)), make([]error, len(picked))
	if b.Versions != nil {
		for j, i := range picked {
			v := b.Versions[i]
			if v.Err != "" {
				errs[j] = fmt.Errorf("%s", v.Err)
				continue
			}
			shorts[j] = write.Version{Type: v.Type, Content: v.Content, Expiry: v.Expiry, Companion: v.Companion}.Short()
		}
	} else if len(picked) > 0 {
		recs := make([]inspect.Record, len(picked))
		for j, i := range picked {
			recs[j] = b.Records[i]
		}
		shorts, errs = actions.ReadVersions(ctx, s.client, b.Keyspace, recs)
	}
	for j, i := range picked {
		r := &b.Records[i]
		if errs[j] != nil {
			fmt.Fprintf(rw.w, "# not pinned: %s: %s\n", inspect.Sanitize(r.Key), inspect.Line(errs[j].Error()))
			continue
		}
		rw.w.WriteString(actions.TargetLine(r.Key, r.RawState, r.Fingerprint, shorts[j]) + "\n")
		rw.n++
	}
}
