package rdb

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"testing"
)

// atlasmartFile is a file of n hashes shaped as the atlasmart records the
// bench harness seeds (fingerprint, state, status, response; listpack,
// with an expiry), about 245 bytes each, as Redis 7.0 saves them.
func atlasmartFile(n int) []byte {
	f := newFile(10).aux("redis-ver", "7.0.15").aux("ctime", "1764936000").op(opSelectDB).len(0).op(opResizeDB).len(uint64(n)).len(uint64(n))
	for i := range n {
		f.expireMs(1796929807030 + int64(i))
		f.op(typeHashListpack).str(fmt.Sprintf("atlasmart:ch23:idem:customer-%d:POST:/orders:req-b9d841-%06d", i%100, i))
		f.str(listpack("fingerprint", fmt.Sprintf("%064x", i*7919), "state", "SUCCEEDED", "status", "201",
			"response", fmt.Sprintf(`{"order_id":"ord-b9d841-%06d","total_cents":%d}`, i, i%100000)))
	}
	return f.end(true)
}

// countFields is a FieldReader as idemctl's: the response by its length,
// the rest whole.
type countFields struct{ n, bytes int64 }

func (c *countFields) ValueCap(name []byte) int {
	if string(name) == "response" {
		return 0
	}
	return 1024
}

func (c *countFields) Field(f *HashField) { c.n++; c.bytes += int64(len(f.Value)) }

// BenchmarkReadAtlasmart reads every record's fields, checking the
// trailer: the reader's share of stats --rdb.
func BenchmarkReadAtlasmart(b *testing.B) {
	const n = 200_000
	file := atlasmartFile(n)
	b.ResetTimer()
	b.SetBytes(int64(len(file)))
	b.ReportAllocs()
	for b.Loop() {
		r, err := NewReader(bytes.NewReader(file), Options{})
		if err != nil {
			b.Fatal(err)
		}
		var c countFields
		for {
			e, err := r.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			if err := r.HashFieldsTo(256, &c); err != nil {
				b.Fatal(err)
			}
			if _, err := r.MemoryEstimate(); err != nil || e.Type != TypeHash {
				b.Fatal(err, e.Type)
			}
		}
		if c.n != 4*n || r.Stats().Checksum != ChecksumOK {
			b.Fatalf("%d fields, checksum %v", c.n, r.Stats().Checksum)
		}
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "records/s")
}

func BenchmarkCRC64(b *testing.B) {
	p := make([]byte, 1<<20)
	for i := range p {
		p[i] = byte(i * 131)
	}
	b.SetBytes(int64(len(p)))
	for b.Loop() {
		crc64Update(0, p)
	}
}
