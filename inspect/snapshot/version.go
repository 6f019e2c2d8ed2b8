package snapshot

import (
	"bytes"
	"context"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"sort"
	"strconv"

	"github.com/idemctl/idemctl/inspect"
)

// maxVersionFields is the version script's MAX_FIELDS: a bigger hash is
// not an idempotency record, and is not pinned.
const maxVersionFields = 4096

// versionPart is one hash field as the version script hashes it.
type versionPart struct {
	name     string
	digest   [sha1.Size]byte
	expireMs int64
}

// version is the record's version at the snapshot's time; lock is its
// companion's state (nil: the schema has no lock).
func (v *snapValue) version(expireMs, atMs int64, lock *snapLock, hasLock bool) inspect.RecordVersion {
	rv := inspect.RecordVersion{Type: v.Type.String(), Expiry: expiryText(expireMs)}
	switch v.Type {
	case inspect.TypeString:
		rv.Content = "string:" + hex.EncodeToString(v.digest[:])
	case inspect.TypeHash:
		rv.Content = v.hashContent(atMs)
	default:
		rv.Content = rv.Type
	}
	if !v.digestOK {
		rv.Err = "a value too big to read from the file"
	}
	if len(v.parts) > maxVersionFields {
		rv.Err = fmt.Sprintf("more than %d fields: not an idempotency record", maxVersionFields)
	}
	if hasLock {
		rv.Companion = lock.companion(atMs)
	}
	return rv
}

// hashContent is the script's 'hash:' .. sha1hex of the fields sorted by
// name, each "len:name=sha1hex(value)[@expiry]".
func (v *snapValue) hashContent(atMs int64) string {
	parts := v.parts[:0:0]
	for _, p := range v.parts {
		if p.expireMs < 0 || p.expireMs > atMs { // gone at the snapshot's time
			parts = append(parts, p)
		}
	}
	sort.Slice(parts, func(i, j int) bool { return parts[i].name < parts[j].name })
	var b bytes.Buffer
	for i, p := range parts {
		if i > 0 {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "%d:%s=%s", len(p.name), p.name, hex.EncodeToString(p.digest[:]))
		if p.expireMs > 0 {
			b.WriteString("@" + strconv.FormatInt(p.expireMs, 10))
		}
	}
	sum := sha1.Sum(b.Bytes())
	return "hash:" + hex.EncodeToString(sum[:])
}

// expiryText is the script's expiry_of: PEXPIRETIME, or -1.
func expiryText(expireMs int64) string {
	if expireMs < 0 {
		return "-1"
	}
	return strconv.FormatInt(expireMs, 10)
}

// companion is the script's companion_of for a lock: none, its type, or
// sha1hex(len:head:expiry) of a string.
func (l *snapLock) companion(atMs int64) string {
	switch {
	case l == nil || l.expireMs >= 0 && l.expireMs <= atMs:
		return "none"
	case l.typ != inspect.TypeString:
		return l.typ.String()
	}
	sum := sha1.Sum(fmt.Appendf(nil, "%d:%s:%s", l.length, l.head, expiryText(l.expireMs)))
	return hex.EncodeToString(sum[:])
}

// lockVersion is a lone lock's version: its own value, and its record
// (absent) as the companion.
func (l *snapLock) version() inspect.RecordVersion {
	return inspect.RecordVersion{Type: l.typ.String(), Content: "string:" + hex.EncodeToString(l.digest[:]), Expiry: expiryText(l.expireMs), Companion: "none"}
}

// Pin reads the versions of keys (records of ks) from the
// snapshot src was opened on, in a pass of its own that hashes every
// value: for --from-file lines pinned to the file from a reader (the TUI)
// that scanned without versions. A pipe cannot be read again.
func Pin(ctx context.Context, src *Source, ks *inspect.Keyspace, keys []string) (map[string]inspect.RecordVersion, error) {
	if !src.Reopenable() {
		return nil, errors.New("standard input was read once: save the snapshot to a file (redis-cli --rdb FILE) to pin its records")
	}
	info := src.Info()
	pass, err := Open(Spec{Path: info.Name, DB: info.DB, At: info.At, Versions: true})
	if err != nil {
		return nil, err
	}
	defer pass.Close()
	want := make(map[string]bool, len(keys))
	for _, k := range keys {
		want[k] = true
	}
	out := make(map[string]inspect.RecordVersion, len(keys))
	covs, err := inspect.Scan(ctx, nil, []*inspect.Keyspace{ks}, inspect.Options{Snapshot: pass, Versions: true}, func(b inspect.Batch) error {
		for i := range b.Records {
			if k := b.Records[i].Key; want[k] {
				out[k] = b.Versions[i]
			}
		}
		if len(out) == len(want) {
			return inspect.Stop
		}
		return nil
	})
	if err == nil && len(covs) > 0 && covs[0].Err != nil && len(out) < len(want) {
		err = covs[0].Err
	}
	return out, err
}
