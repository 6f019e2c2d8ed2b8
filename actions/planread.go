package actions

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/idemctl/idemctl/actions/write"
	"github.com/idemctl/idemctl/inspect"
)

// readSnapshot reads a record (bounded) for a plan or a re-read.
func readSnapshot(ctx context.Context, c redis.UniversalClient, ks *inspect.Keyspace, key string) (write.Snapshot, *inspect.Detail, error) {
	d, err := inspect.FetchDetail(ctx, c, ks, key)
	if errors.Is(err, inspect.ErrNotFound) {
		return write.Snapshot{TTLms: -2}, nil, nil
	}
	if err != nil {
		return write.Snapshot{}, nil, err
	}
	r := d.Record
	s := write.Snapshot{Exists: true, Type: r.Type.String(), State: r.RawState, Canonical: r.State.String(),
		Fingerprint: r.Fingerprint, TTLms: r.TTLms, Fields: map[string]string{}}
	for _, f := range d.Fields {
		v := f.Value
		if f.Truncated {
			v = fmt.Sprintf("‹%d bytes›", f.Len)
			if s.Omitted == nil {
				s.Omitted = map[string]write.ValueDigest{}
			}
			s.Omitted[f.Name] = write.ValueDigest{Len: f.Len, Why: whyReadCap}
		}
		s.Fields[f.Name] = v
	}
	if flat, ok := jsonFields(ks.Schema, d.Fields); ok {
		s.Fields = flat
	}
	return s, &d, nil
}

// readPinned reads the record and its version so that the two agree: the
// version is read before and after the snapshot, and a record that changed
// in between is read again. What the operator is shown is then exactly
// what the script will insist on. A user the ACL does not let run scripts
// can still plan (a dry run only reads): the version is then left unread
// and Apply refuses the plan with the reason.
// The second read also takes the record's before-image (fetchImage), into
// img, so an undo restores exactly the version the write is pinned to.
func readPinned(ctx context.Context, c redis.UniversalClient, ks *inspect.Keyspace, key, comp string, img *imageRead) (s write.Snapshot, d *inspect.Detail, v write.Version, unread, err error) {
	for range 3 {
		v1, err := fetchVersion(ctx, c, key, comp)
		if refusedScript(err) {
			s, d, serr := readSnapshot(ctx, c, ks, key)
			return s, d, write.Version{}, err, serr
		}
		if err != nil {
			return s, nil, v, nil, err
		}
		s, d, err = readSnapshot(ctx, c, ks, key)
		if err != nil {
			return s, nil, v, nil, err
		}
		v2, im, why, err := fetchImage(ctx, c, key, comp)
		if err != nil {
			return s, nil, v, nil, err
		}
		img.image, img.why = im, why
		if v1 == v2 && (v2.Type == "none") == !s.Exists {
			if s.Exists {
				s.Version = v2.Short()
			}
			return s, d, v2, nil, nil
		}
	}
	return s, nil, v, nil, errChanging
}

// pinImage runs read between two reads of the record's version, the second
// with its before-image, until both agree (at most three times; then
// errChanging): what read saw is then exactly that version.
func pinImage(ctx context.Context, c redis.UniversalClient, key, comp string, read func() error) (write.Version, imageRead, error) {
	for range 3 {
		v1, err := fetchVersion(ctx, c, key, comp)
		if err != nil {
			return v1, imageRead{}, err
		}
		if err := read(); err != nil {
			return v1, imageRead{}, err
		}
		v2, im, why, err := fetchImage(ctx, c, key, comp)
		if err != nil {
			return v2, imageRead{}, err
		}
		if v1 == v2 {
			return v2, imageRead{im, why}, nil
		}
	}
	return write.Version{}, imageRead{}, errChanging
}

// errChanging: the record changed between every two reads of its version.
var errChanging = errors.New("the record changed while it was being read, three times over: the application is writing it right now; nothing written")

// refusedScript reports an ACL refusal to run the version script.
func refusedScript(err error) bool {
	return err != nil && isServerError(err) && (strings.HasPrefix(err.Error(), "NOPERM") || scriptACLRefusal(err.Error()))
}
