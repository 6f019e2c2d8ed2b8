package rdb

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
)

func TestCRC64CheckValue(t *testing.T) {
	// CRC-64/Jones as Redis computes it (crc64.c's test vector).
	if got := crc64Update(0, []byte("123456789")); got != 0xe9c6d914c4b8d9ca {
		t.Fatalf("crc64(123456789) = %016x, want e9c6d914c4b8d9ca", got)
	}
	long := bytes.Repeat([]byte("idempotency"), 1000)
	split := crc64Update(crc64Update(0, long[:37]), long[37:])
	if whole := crc64Update(0, long); split != whole {
		t.Fatalf("crc64 in two parts %016x, whole %016x", split, whole)
	}
}

// TestCRC64Lanes checks the three-lane CRC, combined by polynomial
// multiplication, against the CRC computed bit by bit, across lane
// boundaries and from a running value.
func TestCRC64Lanes(t *testing.T) {
	bitwise := func(crc uint64, p []byte) uint64 {
		for _, b := range p {
			crc ^= uint64(b)
			for range 8 {
				if crc&1 == 1 {
					crc = crc>>1 ^ crc64Reflected
				} else {
					crc >>= 1
				}
			}
		}
		return crc
	}
	p := make([]byte, 7*crcLane+13)
	for i := range p {
		p[i] = byte(i*131 + i>>9)
	}
	for _, n := range []int{0, 1, 8, 3*crcLane - 1, 3 * crcLane, 3*crcLane + 5, 6*crcLane + 1, len(p)} {
		for _, start := range []uint64{0, 0xe9c6d914c4b8d9ca} {
			if got, want := crc64Update(start, p[:n]), bitwise(start, p[:n]); got != want {
				t.Errorf("%d bytes from %016x: %016x, want %016x", n, start, got, want)
			}
		}
	}
}

func TestLZFDecode(t *testing.T) {
	src := []byte{2, 'a', 'b', 'c', 0x80, 2} // "abc", then 6 bytes from 3 back
	dst := make([]byte, 9)
	if n, err := lzfDecode(src, dst, false); err != nil || string(dst[:n]) != "abcabcabc" {
		t.Fatalf("lzfDecode = %q, %v", dst[:n], err)
	}
	prefix := make([]byte, 4)
	if n, err := lzfDecode(src, prefix, true); err != nil || string(prefix[:n]) != "abca" {
		t.Fatalf("prefix = %q, %v", prefix[:n], err)
	}
	for _, bad := range [][]byte{{5, 'a'}, {0x20}, {0x20, 9}, {0xe0}, {0, 'a', 0x20, 5}} {
		if _, err := lzfDecode(bad, make([]byte, 16), false); err == nil {
			t.Errorf("lzfDecode(% x) accepted corrupt data", bad)
		}
	}
	if _, err := lzfDecode(src, make([]byte, 8), false); err == nil {
		t.Error("data decoding past the stated length was accepted")
	}
	if _, err := lzfDecode(src, make([]byte, 10), false); err == nil {
		t.Error("data decoding short of the stated length was accepted")
	}
}

func TestSizeClass(t *testing.T) {
	for n, want := range map[int64]int64{1: 8, 8: 8, 9: 16, 24: 32, 128: 128, 129: 160, 160: 160, 161: 192, 257: 320, 1025: 1280, 4097: 5120} {
		if got := sizeClass(n); got != want {
			t.Errorf("sizeClass(%d) = %d, want %d", n, got, want)
		}
	}
}

// collect reads every key of a file, decoding strings and hashes.
type got struct {
	db     int
	key    string
	typ    Type
	enc    string
	expire int64
	value  string
	fields map[string]string
	ttls   map[string]int64
}

func readAll(t *testing.T, b []byte, opt Options) ([]got, *Reader, error) {
	t.Helper()
	r, err := NewReader(bytes.NewReader(b), opt)
	if err != nil {
		return nil, nil, err
	}
	var out []got
	err = eachEntry(r, 1<<20, func(g got, full int64) {
		if full != int64(len(g.value)) {
			t.Errorf("%s: length %d, read %d", g.key, full, len(g.value))
		}
		out = append(out, g)
	})
	return out, r, err
}

// eachEntry reads r to its end, each entry into a got (strings up to
// maxString bytes, full their whole length) handed to fn; io.EOF is the
// end, not an error.
func eachEntry(r *Reader, maxString int, fn func(g got, full int64)) error {
	for {
		e, err := r.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		g := got{db: e.DB, key: string(e.Key), typ: e.Type, enc: e.Encoding, expire: e.ExpireMs}
		var full int64
		switch e.Type {
		case TypeString:
			v, n, err := r.StringValue(maxString)
			if err != nil {
				return err
			}
			g.value, g.enc, full = string(v), e.Encoding, n
		case TypeHash:
			g.fields, g.ttls = map[string]string{}, map[string]int64{}
			if err := r.HashFields(1<<20, 1<<20, func(f HashField) {
				g.fields[string(f.Name)] = string(f.Value)
				if f.ExpireMs >= 0 {
					g.ttls[string(f.Name)] = f.ExpireMs
				}
			}); err != nil {
				return err
			}
		}
		fn(g, full)
	}
}

func TestHandBuiltEncodings(t *testing.T) {
	f := newFile(12).aux("redis-ver", "7.4.0").aux("ctime", "1764936000")
	f.op(opSelectDB).len(0).op(opResizeDB).len(9).len(1)
	f.expireMs(1764936000123).op(typeString).str("idem:exp").str("PROCESSING")
	f.op(typeString).str("idem:int").op(0xc0, 0x85)                   // int8 -123
	f.op(typeString).str("idem:i32").op(0xc2, 0x40, 0xe2, 0x01, 0x00) // int32 123456
	f.op(typeString).str("idem:lzf").op(0xc3).len(6).len(9).op(2, 'a', 'b', 'c', 0x80, 2)
	f.op(typeHashZipmap).str("h:zipmap").str(zipmap("status", "SUCCEEDED", "n", strings.Repeat("z", 300)))
	f.op(typeHashZiplist).str("h:ziplist").str(ziplist("status", "PROCESSING", "n", 7, "big", -70000, "huge", 1<<40, "s", -5, "m", 300))
	f.op(typeHashListpack).str("h:listpack").str(listpack("status", "EXPIRED", "a", 100, "b", -4000, "c", 30000, "d", -(1 << 40), "long", strings.Repeat("L", 5000)))
	f.op(typeHashLpEx).str("h:lpex").u64(1764936005000).str(listpack("status", "PROCESSING", 1764936005000, "response", "{}", 0))
	f.op(typeHashMeta).str("h:meta").u64(1764936001000).len(2).len(0).str("status").str("SUCCEEDED").len(500).str("lock").str("x")
	f.op(typeHashMetaPreGA).str("h:meta-rc").len(1).len(1764936009000).str("status").str("x")
	f.op(typeHashLpExPreGA).str("h:lpex-rc").str(listpack("status", "Y", 1764936007000))
	f.op(typeSetIntset).str("skipped:intset").str("\x02\x00\x00\x00\x01\x00\x00\x00\x05\x00")
	f.op(opIdle).len(1234).op(typeZSet).str("skipped:zset").len(2).str("a").str("1.5").str("b").op(253)
	f.op(opFreq, 5).op(typeZSet2).str("skipped:zset2").len(1).str("m").u64(0)
	f.op(typeListQuicklist2).str("skipped:list").len(1).len(2).str(listpack("x", 1))
	f.op(opSelectDB).len(3).op(typeHash).str("h:db3").len(1).str("f").op(0xc0, 1)
	f.op(opModuleAux).len(99).len(moduleOpUint).len(2).len(moduleOpString).str("m").len(moduleOpEOF)
	f.op(typeModule2).str("skipped:module").len(77).len(moduleOpSint).len(5).len(moduleOpDouble).u64(0).len(moduleOpEOF)
	b := f.end(true)

	keys, r, err := readAll(t, b, Options{})
	if err != nil {
		t.Fatal(err, keys[len(keys)-1].key)
	}
	if r.Header().CTime.Unix() != 1764936000 || r.Header().Aux["redis-ver"] != "7.4.0" || r.Header().Version != 12 {
		t.Errorf("header %+v", r.Header())
	}
	st := r.Stats()
	if st.Checksum != ChecksumOK || st.Keys != int64(len(keys)) || st.ModuleValue != 1 || st.BytesRead != int64(len(b)) {
		t.Errorf("stats %+v, %d keys", st, len(keys))
	}
	by := map[string]got{}
	for _, k := range keys {
		by[k.key] = k
	}
	check := func(key, field, want string) {
		t.Helper()
		k := by[key]
		v := k.value
		if field != "" {
			v = k.fields[field]
		}
		if v != want {
			t.Errorf("%s %s = %q, want %q", key, field, v, want)
		}
	}
	check("idem:exp", "", "PROCESSING")
	check("idem:int", "", "-123")
	check("idem:i32", "", "123456")
	check("idem:lzf", "", "abcabcabc")
	check("h:zipmap", "status", "SUCCEEDED")
	check("h:zipmap", "n", strings.Repeat("z", 300))
	for f, w := range map[string]string{"status": "PROCESSING", "n": "7", "big": "-70000", "huge": "1099511627776", "s": "-5", "m": "300"} {
		check("h:ziplist", f, w)
	}
	for f, w := range map[string]string{"status": "EXPIRED", "a": "100", "b": "-4000", "c": "30000", "d": "-1099511627776", "long": strings.Repeat("L", 5000)} {
		check("h:listpack", f, w)
	}
	check("h:lpex", "status", "PROCESSING")
	check("h:meta", "lock", "x")
	check("h:db3", "f", "1")
	if k := by["idem:exp"]; k.expire != 1764936000123 {
		t.Errorf("expiry %d", k.expire)
	}
	if k := by["idem:lzf"]; k.enc != "lzf" {
		t.Errorf("lzf string's encoding %q", k.enc)
	}
	if k := by["idem:int"]; k.enc != "int" {
		t.Errorf("int string's encoding %q", k.enc)
	}
	if k := by["h:lpex"]; k.ttls["status"] != 1764936005000 || len(k.ttls) != 1 {
		t.Errorf("listpack field TTLs %v", k.ttls)
	}
	if k := by["h:meta"]; k.ttls["lock"] != 1764936001000+500-1 || len(k.ttls) != 1 {
		t.Errorf("hashtable field TTLs %v", k.ttls)
	}
	if k := by["h:meta-rc"]; k.ttls["status"] != 1764936009000 {
		t.Errorf("7.4 RC hashtable field TTLs %v", k.ttls)
	}
	if k := by["h:lpex-rc"]; k.ttls["status"] != 1764936007000 {
		t.Errorf("7.4 RC listpack field TTLs %v", k.ttls)
	}
	if k := by["h:db3"]; k.db != 3 {
		t.Errorf("h:db3 in db %d", k.db)
	}
	for _, k := range []string{"skipped:intset", "skipped:zset", "skipped:zset2", "skipped:list", "skipped:module"} {
		if _, ok := by[k]; !ok {
			t.Errorf("%s not listed", k)
		}
	}

	// Every prefix of the file is a truncated file: a FormatError that
	// says so, never a panic or a silent success.
	for n := range len(b) {
		_, _, err := readAll(t, b[:n], Options{})
		var fe *FormatError
		if !errors.As(err, &fe) {
			t.Fatalf("cut at %d: %v, want a FormatError", n, err)
		}
		if n >= 9 && !fe.Truncated {
			t.Fatalf("cut at %d: %v, not marked truncated", n, err)
		}
	}
	// Every single changed byte is caught (the CRC covers them all).
	for i := range len(b) {
		c := bytes.Clone(b)
		c[i] ^= 0x5a
		if _, _, err := readAll(t, c, Options{}); err == nil {
			t.Fatalf("byte %d changed, the file still read clean", i)
		}
	}
}

func TestHeaderFaults(t *testing.T) {
	for _, c := range []struct {
		in, want string
	}{
		{"", "the file is empty"},
		{"REDI", "truncated"},
		{"garbage\n", `not an RDB file: expected REDIS, found "garba"`},
		{"HELLO0009", `not an RDB file: expected REDIS, found "HELLO"`},
		{"REDISabcd", "four-digit RDB version"},
		{"REDIS0013", "RDB version 13 is newer than this reader knows"},
	} {
		_, err := NewReader(strings.NewReader(c.in), Options{})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.in, err, c.want)
		}
	}
}

func TestChecksumDisabledAndMismatch(t *testing.T) {
	b := newFile(10).op(typeString).str("k").str("v").end(false)
	if _, r, err := readAll(t, b, Options{}); err != nil || r.Stats().Checksum != ChecksumDisabled {
		t.Fatalf("rdbchecksum no: %v", err)
	}
	b = newFile(10).op(typeString).str("k").str("v").end(true)
	b[len(b)-1] ^= 1
	_, _, err := readAll(t, b, Options{})
	if err == nil || !strings.Contains(err.Error(), "checksum mismatch") {
		t.Fatalf("damaged trailer: %v", err)
	}
	old := newFile(4).op(typeString).str("k").str("v").op(opEOF).b
	if _, r, err := readAll(t, old, Options{}); err != nil || r.Stats().Checksum != ChecksumNone {
		t.Fatalf("version 4: %v", err)
	}
}

func TestLimits(t *testing.T) {
	long := strings.Repeat("k", 100)
	big := strings.Repeat("v", 5000)
	b := newFile(11).op(typeString).str(long).str("v").
		op(typeHashListpack).str("h:big").str(listpack("f", big)).
		op(typeString).str("s:big").str(big).
		op(typeString).str("after").str("ok").end(true)
	r, err := NewReader(bytes.NewReader(b), Options{MaxKey: 64, MaxBlob: 1024})
	if err != nil {
		t.Fatal(err)
	}
	e, _ := r.Next()
	if string(e.Key) != "h:big" {
		t.Fatalf("first key %q: the long key was not skipped", e.Key)
	}
	if err := r.HashFields(10, 10, func(HashField) { t.Error("a field of a hash over MaxBlob") }); !errors.Is(err, ErrTooBig) {
		t.Fatalf("over MaxBlob: %v", err)
	}
	e, _ = r.Next()
	v, full, err := r.StringValue(16)
	if string(e.Key) != "s:big" || err != nil || len(v) != 16 || full != 5000 {
		t.Fatalf("capped string: %q %d %d %v", e.Key, len(v), full, err)
	}
	if e, err = r.Next(); err != nil || string(e.Key) != "after" {
		t.Fatalf("after: %v", err)
	}
	if _, err := r.Next(); !errors.Is(err, io.EOF) {
		t.Fatal(err)
	}
	if st := r.Stats(); st.LongKeys != 1 || st.Keys != 4 {
		t.Fatalf("stats %+v", st)
	}
}

func TestCorruptEncodings(t *testing.T) {
	for name, lp := range map[string]string{
		"listpack length": "\x09\x00\x00\x00\x01\x00\x01\x01\xff",
		"listpack short":  listpack("a")[:8],
		"listpack byte":   "\x09\x00\x00\x00\x01\x00\xf9\x01\xff",
		"odd fields":      listpack("a", "b", "c"),
	} {
		b := newFile(11).op(typeHashListpack).str("h").str(lp).end(true)
		_, _, err := readAll(t, b, Options{})
		var fe *FormatError
		if !errors.As(err, &fe) || !strings.Contains(err.Error(), "corrupt listpack hash") {
			t.Errorf("%s: %v", name, err)
		}
	}
}
