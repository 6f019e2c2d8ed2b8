package recordstore

import (
	"fmt"
	"testing"

	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/internal/testkit/inspecttest"
)

// benchStoreRecords are the two shapes a store packs: records of a
// keyspace, held in their template's form, and records without one whose
// captures are held as offsets into the key or as copies; a third of the
// fingerprints are not hex and there are more raw states than are interned.
func benchStoreRecords(b *testing.B) map[string][]inspect.Record {
	ks := inspecttest.Keyspace(b, "atlasmart")
	own := make([]inspect.Record, 4096)
	for i := range own {
		key := fmt.Sprintf("legacy:idem:customer-%d:POST:/orders:req-%08d", i%977, i)
		fp := fmt.Sprintf("%064x", i*7919)
		if i%3 == 0 {
			fp = fmt.Sprintf("FP-%d", i)
		}
		own[i] = inspect.Record{Key: key, Groups: []string{key[12:24], key[25:37], fmt.Sprint("copy-", i%5)}, Fingerprint: fp,
			RawState: fmt.Sprintf("STATE-%d", i%300), TTLms: int64(i), MemoryBytes: 300, DeadlineMs: 1_800_000_000_000 + int64(i),
			State: inspect.StateSucceeded}
	}
	return map[string][]inspect.Record{"template": heldRecords(b, ks, 4096, 8), "captures": own}
}

// BenchmarkRecordStorePack is Append's cost per record: push, with the
// fresh off-heap pages it writes, and pack alone, rewriting one arena
// block that stays in cache.
func BenchmarkRecordStorePack(b *testing.B) {
	for name, recs := range benchStoreRecords(b) {
		b.Run(name, func(b *testing.B) {
			var s Store
			defer s.Reset()
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				if s.Len() == 1<<16 {
					s.Reset()
				}
				s.push(&recs[i%len(recs)])
			}
		})
		b.Run(name+"/hot", func(b *testing.B) {
			var s Store
			defer s.Reset()
			s.Append(recs[:1])
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				if s.used > arenaBlock-maxBlob {
					s.used = 0 // nothing is read back
				}
				var sl slot
				if !s.pack(&recs[i%len(recs)], &sl) {
					b.Fatal("record does not fit")
				}
			}
		})
	}
}

func BenchmarkRecordStorePeek(b *testing.B) {
	for name, recs := range benchStoreRecords(b) {
		var s Store
		s.Append(recs)
		b.Run(name, func(b *testing.B) {
			var p Peeker
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				s.Peek(i%s.Len(), &p)
			}
		})
		b.Run(name+"/key", func(b *testing.B) {
			var p Peeker
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				s.peek(i%s.Len(), &p, false, false)
			}
		})
		s.Reset()
	}
}
