package lookup

import (
	"context"

	"github.com/redis/go-redis/v9"

	"github.com/idemctl/idemctl/inspect"
)

// Find reads the record under the derived key as a scan reads it (live,
// or from opt.Snapshot) and judges the request against it: rec is nil
// when nothing is stored under the key.
func Find(ctx context.Context, c redis.UniversalClient, ks *inspect.Keyspace, d *Derivation, opt inspect.Options) (rec *inspect.Record, v Verdict, err error) {
	r, ok, err := inspect.ReadKey(ctx, c, ks, d.Key, opt)
	if err != nil {
		return nil, Verdict{}, err
	}
	if ok {
		rec = &r
	}
	return rec, Judge(ks, d, rec, storedValue(ctx, c, ks, d, rec, opt)), nil
}

// storedValue is the record's value, read whole (within the detail's
// bounds, live or from the snapshot) only for a library that compares
// the stored request; "" when not read (cut at the read cap).
func storedValue(ctx context.Context, c redis.UniversalClient, ks *inspect.Keyspace, d *Derivation, rec *inspect.Record, opt inspect.Options) string {
	if rec == nil || d.Request == nil {
		return ""
	}
	if snap, isFile := opt.Snapshot.(stringReader); isFile {
		v, ok, cut, err := snap.StringValue(ctx, d.Key, inspect.DetailMaxValue)
		if err != nil || !ok || cut {
			return ""
		}
		return v
	}
	det, err := inspect.FetchDetail(ctx, c, ks, d.Key)
	if err != nil || len(det.Fields) != 1 || det.Fields[0].Truncated {
		return ""
	}
	return det.Fields[0].Value
}

// stringReader is a key source that reads one string value whole: a
// snapshot file (inspect/snapshot).
type stringReader interface {
	StringValue(ctx context.Context, key string, limit int) (v string, ok, cut bool, err error)
}
