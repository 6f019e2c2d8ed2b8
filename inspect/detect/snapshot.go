package detect

import (
	"context"

	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/inspect/snapshot"
)

// DetectSnapshot is Detect on a snapshot: the first n keys matching
// pattern in the file's database, judged at the snapshot's time.
func DetectSnapshot(ctx context.Context, src *snapshot.Source, pattern string, n int, progress func(inspect.Progress)) (DetectResult, error) {
	smp, err := snapshot.ReadSample(ctx, src, pattern, n, progress)
	if err != nil {
		return DetectResult{Match: pattern, Types: map[string]int{}}, err
	}
	return detect(ctx, snapSample{smp}, pattern, smp.Keys())
}

// snapSample reads detect's sample from a snapshot's values, read once.
type snapSample struct{ *snapshot.Sample }

func (s snapSample) types(context.Context) (map[string]int, error) { return s.Types(), nil }

func (s snapSample) records(_ context.Context, ks *inspect.Keyspace, keys []string) ([]inspect.Record, error) {
	return s.Records(ks, keys), nil
}

func (s snapSample) docs(_ context.Context, container string) []sampleDoc {
	var out []sampleDoc
	if container == "hash" {
		for _, m := range s.Hashes(draftSample) {
			out = append(out, sampleDoc{fields: m})
		}
		return out
	}
	for _, doc := range s.JSONDocs(draftSample) {
		out = append(out, sampleDoc{json: doc})
	}
	return out
}
