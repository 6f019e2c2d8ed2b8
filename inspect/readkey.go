package inspect

import (
	"context"
	"strings"

	"github.com/redis/go-redis/v9"
)

// ReadKey reads one key of ks as a scan reads it (the same reader, caps
// and classification): from the live server with a handful of commands,
// or, when opt.Snapshot is set, from the snapshot. ok=false: no such key.
func ReadKey(ctx context.Context, c redis.UniversalClient, ks *Keyspace, key string, opt Options) (r Record, ok bool, err error) {
	if opt.Snapshot == nil {
		f := &fetcher{c: c, ks: ks, memOn: newTrue(), respAll: opt.ResponseSizes}
		got, err := f.fetch(ctx, []string{key})
		if err != nil || len(got.records) == 0 {
			return Record{}, false, err
		}
		return got.records[0], true, nil
	}
	exact := *ks
	exact.Match = escapeGlob(key)
	opt.MaxKeys = 0
	_, err = Scan(ctx, c, []*Keyspace{&exact}, opt, func(b Batch) error {
		for _, rec := range b.Records {
			if rec.Key == key {
				r, ok = rec, true
				r.Keyspace = ks
			}
		}
		return nil
	})
	return r, ok, err
}

// escapeGlob is a SCAN pattern matching key alone.
func escapeGlob(key string) string {
	var b strings.Builder
	for _, c := range []byte(key) {
		if strings.IndexByte(`*?[]\`, c) >= 0 {
			b.WriteByte('\\')
		}
		b.WriteByte(c)
	}
	return b.String()
}
