package rdb

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestFileReadAhead reads a file of several megabytes through the
// read-ahead a regular file gets, with values that straddle the buffers
// (a listpack longer than the room left for a tail, a string of nearly a
// whole buffer), and checks every key, value and the trailer against a read
// of the same bytes from memory, then the same file cut short.
func TestFileReadAhead(t *testing.T) {
	f := newFile(10).aux("ctime", "1764936000").op(opSelectDB).len(0)
	for i := range 30_000 {
		f.expireMs(1796929807030 + int64(i))
		f.op(typeHashListpack).str(fmt.Sprintf("atlasmart:ch23:idem:customer-%d:req-%06d", i%100, i))
		f.str(listpack("fingerprint", fmt.Sprintf("%064x", i*7919), "state", "SUCCEEDED", "status", 201, "n", i))
		switch i % 5000 {
		case 17:
			f.op(typeHashListpack).str(fmt.Sprintf("big-lp-%d", i)).str(listpack("blob", strings.Repeat(fmt.Sprint(i), 50_000)))
		case 4000:
			f.op(typeString).str(fmt.Sprintf("big-str-%d", i)).str(strings.Repeat("v", inputBuf-1000))
		}
	}
	b := f.end(true)
	path := filepath.Join(t.TempDir(), "dump.rdb")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	want, mr, err := readAll(t, b, Options{MaxBlob: 4 << 20})
	if err != nil || mr.Stats().Checksum != ChecksumOK {
		t.Fatalf("from memory: %v", err)
	}
	for _, cut := range []int{len(b), len(b) - 3, 3*inputBuf + 77} {
		if err := os.WriteFile(path, b[:cut], 0o600); err != nil {
			t.Fatal(err)
		}
		fh, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		got, fr, err := readFile(fh, Options{MaxBlob: 4 << 20})
		fh.Close()
		if cut == len(b) {
			if err != nil || fr.Stats().Checksum != ChecksumOK || fr.Stats().BytesRead != int64(len(b)) {
				t.Fatalf("from the file: %v, %+v", err, fr.Stats())
			}
			if len(got) != len(want) {
				t.Fatalf("%d keys from the file, %d from memory", len(got), len(want))
			}
			for i := range want {
				if got[i] != digestOf(want[i]) {
					t.Fatalf("key %d (%s) differs", i, want[i].key)
				}
			}
			continue
		}
		var fe *FormatError
		if !errors.As(err, &fe) || !fe.Truncated {
			t.Errorf("cut at %d: %v, want a truncated file", cut, err)
		}
	}
}

// readFile is readAll over an open file, each key summed up.
func readFile(fh *os.File, opt Options) ([][32]byte, *Reader, error) {
	r, err := NewReader(fh, opt)
	if err != nil {
		return nil, nil, err
	}
	var out [][32]byte
	err = eachEntry(r, 1<<21, func(g got, _ int64) { out = append(out, digestOf(g)) })
	return out, r, err
}

func digestOf(g got) [32]byte {
	var w bytes.Buffer
	fmt.Fprintf(&w, "%d %q %v %s %d %q", g.db, g.key, g.typ, g.enc, g.expire, g.value)
	for _, k := range slices.Sorted(maps.Keys(g.fields)) {
		fmt.Fprintf(&w, " %q=%q", k, g.fields[k])
	}
	return sha256.Sum256(w.Bytes())
}
