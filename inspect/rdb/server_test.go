package rdb

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/idemctl/idemctl/internal/testkit/redistest"
	"github.com/redis/go-redis/v9"
)

func TestMain(m *testing.M) { os.Exit(redistest.RunMain(m)) }

// TestServerWrittenFile reads a snapshot the server under test wrote, of
// every type and encoding it has, and checks each key, value, expiry and
// field TTL against the live server.
func TestServerWrittenFile(t *testing.T) {
	srv, c := redistest.SharedClient(t)
	ctx := context.Background()
	fieldTTL, err := redistest.HasFieldTTL(c)
	if err != nil {
		t.Fatal(err)
	}
	seedEverything(t, ctx, c, fieldTTL)
	path := srv.Snapshot(t)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	keys, r, err := readAll(t, b, Options{})
	if err != nil {
		t.Fatalf("%s: %v", redistest.Describe(), err)
	}
	if st := r.Stats(); st.Checksum != ChecksumOK || st.BytesRead != int64(len(b)) {
		t.Errorf("stats %+v", st)
	}
	if h := r.Header(); time.Since(h.CTime) > time.Minute || h.Server() == "" {
		t.Errorf("header %+v", h)
	}
	t.Logf("%s wrote RDB version %d, %d keys", redistest.Describe(), r.Header().Version, len(keys))
	live := 0
	for _, db := range []int{0, 2} {
		n, err := srv.Client(db).DBSize(ctx).Result()
		if err != nil {
			t.Fatal(err)
		}
		live += int(n)
	}
	if len(keys) != live {
		t.Errorf("%d keys in the file, %d live", len(keys), live)
	}
	// A copy cut anywhere (a snapshot still being written, a pipe that
	// broke) is reported as truncated, with the offset where it ends.
	for _, n := range cuts(len(b)) {
		_, _, err := readAll(t, b[:n], Options{})
		var fe *FormatError
		if !errors.As(err, &fe) || !fe.Truncated || fe.Offset > int64(n) {
			t.Fatalf("cut at %d of %d: %v, want truncated at or before %d", n, len(b), err, n)
		}
	}
	encodings := map[string]bool{}
	for _, k := range keys {
		encodings[k.typ.String()+"/"+k.enc] = true
		compareLive(t, ctx, srv.Client(k.db), k)
	}
	for _, want := range []string{"string/raw", "string/int", "string/lzf", "hash/listpack", "hash/hashtable"} {
		if !encodings[want] {
			t.Errorf("no %s key in the file (have %v)", want, encodings)
		}
	}
	if fieldTTL && (!encodings["hash/listpack-field-ttl"] || !encodings["hash/hashtable-field-ttl"]) {
		t.Errorf("no listpack hash with field TTLs in the file (have %v)", encodings)
	}
}

// cuts is every offset of a small file, or a spread of them in a big one.
func cuts(size int) []int {
	if size <= 8192 {
		out := make([]int, size)
		for i := range out {
			out[i] = i
		}
		return out
	}
	var out []int
	for i := 0; i < size; i += 1 + i/64 {
		out = append(out, i)
	}
	return out
}

func seedEverything(t *testing.T, ctx context.Context, c *redis.Client, fieldTTL bool) {
	t.Helper()
	p := c.Pipeline()
	p.Set(ctx, "s:small", "PROCESSING", 0)
	p.Set(ctx, "s:int", "12345", 0)
	p.Set(ctx, "s:neg", "-7", 0)
	p.Set(ctx, "s:int64", "1099511627776", 0)
	p.Set(ctx, "s:lzf", strings.Repeat(`{"status":"SUCCEEDED"}`, 20), 0)
	p.Set(ctx, "s:big-lzf", strings.Repeat("abcdefgh", 40000), 0)
	p.Set(ctx, "s:binary", "\x00\x01\xff\x1b[31m", time.Hour)
	p.Set(ctx, "s:exp", `{"status":"PROCESSING"}`, 90*time.Second)
	p.Set(ctx, "k\x00\xffbinary", "v", 0)
	p.HSet(ctx, "h:small", "status", "COMPLETED", "n", 7, "neg", -4000, "big", 1<<40, "data", strings.Repeat("x", 40))
	big := make([]any, 0, 1200)
	for i := range 600 {
		big = append(big, fmt.Sprintf("f%03d", i), strings.Repeat(fmt.Sprint(i), 30))
	}
	p.HSet(ctx, "h:big", big...)
	p.HSet(ctx, "h:wide", "status", "INPROGRESS", "response", strings.Repeat("r", 200))
	p.Expire(ctx, "h:wide", time.Hour)
	p.RPush(ctx, "l:list", "a", "b", 3)
	p.SAdd(ctx, "set:int", 1, 2, 3)
	p.SAdd(ctx, "set:str", "a", "b")
	p.ZAdd(ctx, "z:small", redis.Z{Score: 1.5, Member: "a"})
	zs := make([]redis.Z, 200)
	for i := range zs {
		zs[i] = redis.Z{Score: float64(i) / 3, Member: fmt.Sprint("m", i)}
	}
	p.ZAdd(ctx, "z:big", zs...)
	p.XAdd(ctx, &redis.XAddArgs{Stream: "x:stream", Values: []any{"f", "v"}})
	p.XAdd(ctx, &redis.XAddArgs{Stream: "x:stream", Values: []any{"f", "w"}})
	p.XGroupCreate(ctx, "x:stream", "g", "0")
	p.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "g", Consumer: "c1", Streams: []string{"x:stream", ">"}, Count: 1})
	if _, err := p.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	c2 := redis.NewClient(&redis.Options{Addr: c.Options().Addr, DB: 2, DisableIdentity: true})
	defer c2.Close()
	if err := c2.Set(ctx, "db2:key", "other", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if fieldTTL {
		c.HSet(ctx, "h:ttl", "status", "PROCESSING", "lock", "x")
		c.Do(ctx, "hpexpire", "h:ttl", 120000, "fields", 1, "lock")
		bigTTL := make([]any, 0, 600)
		for i := range 300 {
			bigTTL = append(bigTTL, fmt.Sprint("f", i), strings.Repeat("v", 80))
		}
		c.HSet(ctx, "h:ttl-big", bigTTL...)
		if err := c.Do(ctx, "hpexpire", "h:ttl-big", 300000, "fields", 2, "f1", "f2").Err(); err != nil {
			t.Fatal(err)
		}
	}
}

// compareLive checks one key read from the file against the server.
func compareLive(t *testing.T, ctx context.Context, c *redis.Client, k got) {
	t.Helper()
	typ, err := c.Type(ctx, k.key).Result()
	if err != nil || typ != k.typ.String() {
		t.Errorf("%q: type %s in the file, %s live (%v)", k.key, k.typ, typ, err)
		return
	}
	pexp, err := c.Do(ctx, "pexpiretime", k.key).Int64()
	if err != nil {
		t.Fatal(err)
	}
	if pexp < 0 {
		pexp = -1
	}
	if pexp != k.expire {
		t.Errorf("%q: expiry %d in the file, %d live", k.key, k.expire, pexp)
	}
	switch k.typ {
	case TypeString:
		if v := c.Get(ctx, k.key).Val(); v != k.value {
			t.Errorf("%q: %d bytes in the file, %d live", k.key, len(k.value), len(v))
		}
	case TypeHash:
		live := c.HGetAll(ctx, k.key).Val()
		if fmt.Sprint(live) != fmt.Sprint(k.fields) {
			t.Errorf("%q: fields differ: file %d, live %d", k.key, len(k.fields), len(live))
		}
		for f, want := range k.ttls {
			got, err := c.Do(ctx, "hpexpiretime", k.key, "fields", 1, f).Int64Slice()
			if err != nil || len(got) != 1 || got[0] != want {
				t.Errorf("%q field %q: TTL %d in the file, %v live (%v)", k.key, f, want, got, err)
			}
		}
	}
}

// TestDigestsMatchServer: with Options.Digest, each string's and hash
// field's SHA-1 is the server's own SHA1HEX of the value, whatever its
// encoding (raw, integer, LZF; listpack, hash table).
func TestDigestsMatchServer(t *testing.T) {
	srv, c := redistest.SharedClient(t)
	ctx := context.Background()
	seedEverything(t, ctx, c, false)
	b, err := os.ReadFile(srv.Snapshot(t))
	if err != nil {
		t.Fatal(err)
	}
	r, err := NewReader(bytes.NewReader(b), Options{Digest: true})
	if err != nil {
		t.Fatal(err)
	}
	sha := func(v string) string {
		h, err := c.Eval(ctx, "return redis.sha1hex(ARGV[1])", nil, v).Text()
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	checked := 0
	for {
		e, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if e.DB != 0 {
			continue
		}
		key := string(e.Key)
		switch e.Type {
		case TypeString:
			if _, _, err := r.StringValue(8); err != nil {
				t.Fatal(err)
			}
			sum, ok := r.ValueDigest()
			if want := sha(c.Get(ctx, key).Val()); !ok || hex.EncodeToString(sum[:]) != want {
				t.Errorf("%q (%s): digest %x, server %s", key, e.Encoding, sum, want)
			}
			checked++
		case TypeHash:
			live := c.HGetAll(ctx, key).Val()
			if err := r.HashFields(64, 8, func(f HashField) {
				if want := sha(live[string(f.Name)]); !f.DigestOK || hex.EncodeToString(f.Digest[:]) != want {
					t.Errorf("%q field %q (%s): digest %x, server %s", key, f.Name, e.Encoding, f.Digest, want)
				}
				checked++
			}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if checked < 600 {
		t.Fatalf("%d values checked", checked)
	}
}
