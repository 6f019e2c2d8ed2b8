package inspect

import "testing"

// benchKeyspace is mustKeyspace for benchmarks (mustKeyspace takes a *testing.T).
func benchKeyspace(b *testing.B, preset string) *Keyspace {
	b.Helper()
	s, err := Preset(preset)
	if err != nil {
		b.Fatal(err)
	}
	ks, err := NewKeyspace(KeyspaceSpec{Schema: s})
	if err != nil {
		b.Fatal(err)
	}
	return ks
}

const benchKey = "atlasmart:ch23:idem:customer-42:POST:/v2/checkout:confirm:req-1a2b3c-4711"

func BenchmarkClassifyAtlasmart(b *testing.B) {
	ks := benchKeyspace(b, "atlasmart")
	now := int64(1_800_000_000_000)
	cases := []struct {
		name string
		o    *observed
	}{
		{"succeeded", hashObs(benchKey, 250_000, map[int]string{slotState: "SUCCEEDED", slotFingerprint: fp64, slotStatus: "201"})},
		{"stale", hashObs(benchKey, 20_000, map[int]string{slotState: "PROCESSING", slotFingerprint: fp64})},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				classify(ks, c.o, now)
			}
		})
	}
}

// A Powertools-like record (status, expiration, in_progress_expiration,
// validation hash, data holding the response as a JSON string), decoded
// with the jsonSchema of classify_test.go.
const powertoolsRecord = `{"status":"COMPLETED","expiration":1764680400,"in_progress_expiration":1764676860000,` +
	`"validation":"` + fp64 + `","data":"{\"order_id\":\"ord-4711\",\"total_cents\":4200}"}`

func BenchmarkDecodeJSON(b *testing.B) {
	s, err := ParseSchemaYAML("powertools", []byte(jsonSchema))
	if err != nil {
		b.Fatal(err)
	}
	data := []byte(powertoolsRecord)
	var f fields
	decodeJSON(s, data, false, &f)
	if f.decodeErr || f.val[slotState] != "COMPLETED" || f.val[slotFingerprint] != fp64 || f.respLen <= 0 {
		b.Fatalf("fixture does not decode: %+v", f)
	}
	b.ReportAllocs()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		f = fields{}
		decodeJSON(s, data, false, &f)
	}
}

func BenchmarkAppendJSON(b *testing.B) {
	ks := benchKeyspace(b, "atlasmart")
	o := hashObs(benchKey, 20_000, map[int]string{slotState: "PROCESSING", slotFingerprint: fp64})
	r := classify(ks, o, 1_800_000_000_000)
	buf := AppendJSON(nil, &r)
	b.ReportAllocs()
	b.SetBytes(int64(len(buf)))
	for b.Loop() {
		buf = AppendJSON(buf[:0], &r)
	}
}

func BenchmarkSanitize(b *testing.B) {
	for _, c := range []struct{ name, key string }{
		{"clean", benchKey},
		{"hostile", "atlasmart:ch23:idem:\x1b]52;c;ZXZpbA==\x07:POST:/orders\u202e:req-\xff\x00\u009b31m-1"},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				Sanitize(c.key)
			}
		})
	}
}
