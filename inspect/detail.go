package inspect

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/redis/go-redis/v9"
)

// Limits for fetching one record whole, on demand.
const (
	DetailMaxFields = 256       // hashes with more fields show only the schema's fields
	DetailMaxBytes  = 256 << 10 // larger keys show only the schema's fields
	DetailMaxValue  = 64 << 10  // any one value is cut here
)

// Field is one attribute of a record as stored.
type Field struct {
	Name      string
	Value     string
	Len       int64 // full length in Redis
	Truncated bool
	TTLms     int64 // the field's own TTL (Redis 7.4+ hash-field TTLs); -1 none or not known
}

// Detail is a record fetched whole (within bounds) for the detail screen.
type Detail struct {
	Record       Record
	Fields       []Field // hash fields, sorted by name; or one "value" for strings
	FieldCount   int64   // HLEN, or 1 for strings
	Partial      string  // why only the schema's fields are shown ("" when whole)
	Encoding     string  // OBJECT ENCODING; "" when refused
	ServerTimeMs int64
}

// FetchDetail reads one key whole when it is small, and only the schema's
// fields (each capped) when it is not. The record is classified afresh.
func FetchDetail(ctx context.Context, c redis.UniversalClient, ks *Keyspace, key string) (Detail, error) {
	f := &fetcher{c: c, ks: ks, memOn: newTrue(), respAll: true, samples: DetailMaxFields}
	res, err := f.fetch(ctx, []string{key})
	if err != nil {
		return Detail{}, err
	}
	if len(res.records) == 0 {
		return Detail{}, ErrNotFound
	}
	d := Detail{Record: res.records[0], ServerTimeMs: res.nowMs, FieldCount: 1}
	pipe := c.Pipeline()
	enc := redis.NewStringCmd(ctx, "object", "encoding", key)
	enc.SetFirstKeyPos(2)
	_ = pipe.Process(ctx, enc)
	var hlen *redis.IntCmd
	if d.Record.Type == TypeHash {
		hlen = pipe.HLen(ctx, key)
	}
	if err := ExecPipe(ctx, pipe); err != nil {
		return d, err
	}
	d.Encoding = enc.Val()
	switch d.Record.Type {
	case TypeHash:
		d.FieldCount = hlen.Val()
		small := d.FieldCount <= DetailMaxFields && d.Record.MemoryBytes >= 0 && d.Record.MemoryBytes <= DetailMaxBytes &&
			!d.Record.Flags.Has(FlagMemoryEstimated)
		if small {
			all, err := c.HGetAll(ctx, key).Result()
			if err != nil {
				return d, fmt.Errorf("HGETALL: %w", err) // e.g. NOPERM: say so, never show empty fields
			}
			for name, v := range all {
				d.Fields = append(d.Fields, capField(name, v))
			}
		} else {
			d.Partial = "too large to show whole"
			if d.Record.MemoryBytes < 0 {
				d.Partial = "size unknown (MEMORY USAGE unavailable)"
			}
			d.Fields, err = schemaFields(ctx, c, ks.Schema, key)
			if err != nil {
				return d, err
			}
		}
		sort.Slice(d.Fields, func(i, j int) bool { return d.Fields[i].Name < d.Fields[j].Name })
		fieldTTLs(ctx, c, key, d.Fields)
	case TypeString:
		v, err := c.GetRange(ctx, key, 0, DetailMaxValue-1).Result()
		if err != nil {
			return d, fmt.Errorf("GETRANGE: %w", err)
		}
		n, _ := c.StrLen(ctx, key).Result()
		d.Fields = []Field{{Name: "value", Value: v, Len: n, Truncated: n > int64(len(v)), TTLms: -1}}
	}
	return d, nil
}

// fieldTTLs fills each hash field's own TTL where the server has them
// (one HPTTL); elsewhere they stay -1.
func fieldTTLs(ctx context.Context, c redis.UniversalClient, key string, fs []Field) {
	for i := range fs {
		fs[i].TTLms = -1
	}
	if len(fs) == 0 {
		return
	}
	args := make([]any, 0, 4+len(fs))
	args = append(args, "hpttl", key, "fields", len(fs))
	for _, f := range fs {
		args = append(args, f.Name)
	}
	ttls, err := c.Do(ctx, args...).Int64Slice()
	if err != nil || len(ttls) != len(fs) {
		return // Redis before 7.4, Valkey 8, or not allowed: none shown
	}
	for i, t := range ttls {
		if t >= 0 {
			fs[i].TTLms = t
		}
	}
}

func capField(name, v string) Field {
	f := Field{Name: name, Value: v, Len: int64(len(v))}
	if len(v) > DetailMaxValue {
		f.Value, f.Truncated = v[:DetailMaxValue], true
	}
	return f
}

// schemaFields reads the schema's own fields of a big hash, each capped.
func schemaFields(ctx context.Context, c redis.UniversalClient, s *Schema, key string) ([]Field, error) {
	names := append([]string{}, s.fields...)
	if s.Response != "" {
		names = append(names, s.Response)
	}
	pipe := c.Pipeline()
	lens := map[string]*redis.IntCmd{}
	for _, n := range names {
		if n != "" {
			lens[n] = pipe.HStrLen(ctx, key, n)
		}
	}
	if err := ExecPipe(ctx, pipe); err != nil {
		return nil, err
	}
	var out []Field
	for n, l := range lens {
		if l.Val() == 0 {
			continue
		}
		f := Field{Name: n, Len: l.Val()}
		if l.Val() > DetailMaxValue {
			f.Truncated = true // HGET has no range form: too big to fetch
			out = append(out, f)
			continue
		}
		v, err := c.HGet(ctx, key, n).Result()
		if err != nil && err != redis.Nil {
			return nil, fmt.Errorf("HGET %s: %w", n, err)
		}
		f.Value = v
		out = append(out, f)
	}
	return out, nil
}

// ErrNotFound means the key no longer exists.
var ErrNotFound = fmt.Errorf("the key no longer exists")

// PrettyJSON indents v when it is a JSON object or array.
func PrettyJSON(v string) (string, bool) {
	t := strings.TrimSpace(v)
	if t == "" || (t[0] != '{' && t[0] != '[') {
		return v, false
	}
	var buf bytes.Buffer
	if err := json.Indent(&buf, []byte(t), "", "  "); err != nil {
		return v, false
	}
	return buf.String(), true
}
