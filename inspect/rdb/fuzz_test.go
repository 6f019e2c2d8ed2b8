package rdb

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
)

// FuzzReader feeds the reader arbitrary files: it must return entries or
// a FormatError, never panic, loop, or allocate past its limits.
func FuzzReader(f *testing.F) {
	f.Add(newFile(12).aux("ctime", "1764936000").op(opSelectDB).len(0).
		expireMs(1764936000123).op(typeString).str("k").str("PROCESSING").
		op(typeHashListpack).str("h").str(listpack("status", "OK", "n", 300)).
		op(typeHashLpEx).str("h2").u64(5).str(listpack("a", "b", 9)).
		op(typeHashMeta).str("h3").u64(5).len(1).len(2).str("f").str("v").
		op(typeString).str("z").op(0xc3).len(6).len(9).op(2, 'a', 'b', 'c', 0x80, 2).end(true))
	f.Add(newFile(9).op(typeHashZiplist).str("h").str(ziplist("a", 1, "b", strings.Repeat("x", 70))).
		op(typeHashZipmap).str("m").str(zipmap("k", "v")).op(typeZSet).str("z").len(1).str("a").str("1").end(false))
	f.Add([]byte("REDIS0011\xff\x00\x00\x00\x00\x00\x00\x00\x00"))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := NewReader(bytes.NewReader(b), Options{MaxBlob: 1 << 16, MaxKey: 1 << 10})
		if err != nil {
			var fe *FormatError
			if !errors.As(err, &fe) {
				t.Fatalf("header: %v is not a FormatError", err)
			}
			return
		}
		for range len(b) + 1 { // each key takes at least a byte
			e, err := r.Next()
			if errors.Is(err, io.EOF) {
				return
			}
			if err != nil {
				var fe *FormatError
				if !errors.As(err, &fe) {
					t.Fatalf("%v is not a FormatError", err)
				}
				return
			}
			switch e.Type {
			case TypeString:
				_, _, err = r.StringValue(64)
			case TypeHash:
				err = r.HashFields(64, 64, func(HashField) {})
			}
			if err != nil && !errors.Is(err, ErrTooBig) {
				var fe *FormatError
				if !errors.As(err, &fe) {
					t.Fatalf("value: %v is not a FormatError", err)
				}
				return
			}
		}
		t.Fatal("more keys than bytes")
	})
}
