package snapshot

import (
	"context"
	"errors"
	"io"

	"github.com/idemctl/idemctl/inspect/rdb"
)

// StringValue is key's value in the snapshot's database when it is a
// string, read up to limit bytes: what a lookup that compares the stored
// request (express-idempotency) needs, where FetchDetail reads a live
// server. It is one pass over the file. ok=false: no such key, or not a
// string; cut: the value is longer than limit and was not read.
func (s *Source) StringValue(ctx context.Context, key string, limit int) (v string, ok, cut bool, err error) {
	r, e, err := s.reader()
	if err != nil {
		return "", false, false, err
	}
	defer func() {
		// Read part-way: the next pass opens the file anew.
		if s.rc != nil {
			s.rc.Close()
			s.rc = nil
		}
	}()
	for n := 0; ; n++ {
		if e == nil {
			if e, err = r.Next(); errors.Is(err, io.EOF) {
				return "", false, false, nil
			} else if err != nil {
				return "", false, false, &Error{Name: s.spec.Path, Err: err}
			}
		}
		if n%4096 == 0 && ctx.Err() != nil {
			return "", false, false, ctx.Err()
		}
		if e.DB == s.spec.DB && string(e.Key) == key {
			if e.Type != rdb.TypeString {
				return "", false, false, nil
			}
			b, full, err := r.StringValue(limit)
			if err != nil {
				return "", false, false, &Error{Name: s.spec.Path, Err: err}
			}
			return string(b), true, full > int64(len(b)), nil
		}
		e = nil
	}
}
