package detect

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/idemctl/idemctl/inspect"
)

// draftSample is how many records a drafted mapping reads (bounded: hashes
// of at most 64 fields, strings up to 4 KiB).
const draftSample = 20

var hexish = regexp.MustCompile(`^[0-9a-fA-F]{32,128}$`)

// pathStats is what the sample showed of one field or JSON path.
type pathStats struct {
	path   string
	seen   int      // records holding it
	values []string // sample values (capped)
	object bool     // a JSON object (its leaves are listed too)
}

// proposeMapping drafts an explicit schema from the fields and JSON paths
// of sampled records when no preset fits: the operator reviews it, nothing
// is guessed silently, and each guess says what it rests on.
func proposeMapping(ctx context.Context, smp detectSample, pattern string, sampled int, types map[string]int) string {
	container, codec := "string", "json"
	if types["hash"] > types["string"] {
		container, codec = "hash", "fields"
	}
	paths, read := samplePaths(ctx, smp, container)
	var b strings.Builder
	fmt.Fprintf(&b, "# No preset fits: a draft from %d of %d sampled records — review every line.\n", read, sampled)
	fmt.Fprintf(&b, "schemas:\n  detected:\n    container: %s\n    codec: %s\n", container, codec)
	if read == 0 {
		fmt.Fprintf(&b, "    # no record could be read as %s\n", map[string]string{"hash": "a small hash", "string": "a JSON object"}[container])
	}
	writeDraftState(&b, paths, read)
	writeDraftRoles(&b, paths)
	var seen []string
	for _, ps := range paths {
		seen = append(seen, fmt.Sprintf("%s×%d", ps.path, ps.seen))
	}
	fmt.Fprintf(&b, "    # fields seen (records holding each): %s\n", inspect.Sanitize(strings.Join(seen, ", ")))
	fmt.Fprintf(&b, "keyspaces:\n  - name: detected\n    match: %s\n    schema: detected\n", inspect.YAMLQuote(pattern))
	return b.String()
}

// pathSet is what the sample showed of each field or JSON path, by path.
type pathSet map[string]*pathStats

// note records one value of path.
func (set pathSet) note(path, v string, object bool) {
	ps := set[path]
	if ps == nil {
		ps = &pathStats{path: path}
		set[path] = ps
	}
	ps.seen++
	ps.object = ps.object || object
	if len(ps.values) < draftSample {
		ps.values = append(ps.values, capText(v, 256))
	}
}

// samplePaths reads the sample's records whole and returns what each of
// their fields or JSON paths showed, sorted by path, and how many records
// were read.
func samplePaths(ctx context.Context, smp detectSample, container string) (paths []*pathStats, read int) {
	set := pathSet{}
	for _, d := range smp.docs(ctx, container) {
		read++
		if d.fields != nil {
			for f, v := range d.fields {
				set.note(f, v, false)
			}
			continue
		}
		flattenSample(d.json, "", 0, set.note)
	}
	for _, ps := range set {
		paths = append(paths, ps)
	}
	sort.Slice(paths, func(i, j int) bool { return paths[i].path < paths[j].path })
	return paths, read
}

// writeDraftState writes the state mapping draftState proposes, or says
// that nothing looks like a state.
func writeDraftState(b *strings.Builder, paths []*pathStats, read int) {
	state, presence := draftState(paths, read)
	switch {
	case state != nil:
		fmt.Fprintf(b, "    state:\n      field: %s # on %d of %d records\n      map:\n", yamlScalar(state.path), state.seen, read)
		for _, v := range distinct(state.values) {
			fmt.Fprintf(b, "        %s: unknown # processing, succeeded, failed or reconciled?\n", inspect.YAMLQuote(v))
		}
	case presence != nil && presence.seen == read:
		fmt.Fprintf(b, "    # no state field; %s holds an HTTP status on every record: a stored response?\n", inspect.Sanitize(presence.path))
		fmt.Fprintf(b, "    state:\n      field: %s\n      otherwise: succeeded\n", yamlScalar(presence.path))
	case presence != nil:
		fmt.Fprintf(b, "    # no state field; %s is on %d of %d records: read as \"present once completed\"?\n",
			inspect.Sanitize(presence.path), presence.seen, read)
		fmt.Fprintf(b, "    state:\n      field: %s\n      otherwise: succeeded\n      missing: processing\n", yamlScalar(presence.path))
	default:
		fmt.Fprintf(b, "    state:\n      field: \"\" # nothing looks like a state\n")
	}
}

// writeDraftRoles writes the first path that looks like each other role:
// a fingerprint (hex), an HTTP status, a stored response (by its name).
func writeDraftRoles(b *strings.Builder, paths []*pathStats) {
	if fp := firstPath(paths, func(ps *pathStats) bool { return allMatch(ps.values, hexish) }); fp != nil {
		fmt.Fprintf(b, "    fingerprint: %s # hex on every record that has it\n", yamlScalar(fp.path))
	}
	if st := firstPath(paths, func(ps *pathStats) bool {
		return named(ps.path, "statuscode", "status_code", "status") && allHTTPStatus(ps.values)
	}); st != nil {
		fmt.Fprintf(b, "    status: %s\n", yamlScalar(st.path))
	}
	if rp := firstPath(paths, func(ps *pathStats) bool { return named(ps.path, "body", "response", "data", "result") }); rp != nil {
		fmt.Fprintf(b, "    response: %s\n", yamlScalar(rp.path))
	}
}

// flattenSample notes a JSON document's paths: objects are descended into
// (three levels), every other value is a leaf.
func flattenSample(doc map[string]any, prefix string, depth int, note func(path, v string, object bool)) {
	for k, x := range doc {
		path := k
		if prefix != "" {
			path = prefix + "." + k
		}
		if sub, ok := x.(map[string]any); ok {
			note(path, "{…}", true)
			if depth < 2 {
				flattenSample(sub, path, depth+1, note)
			}
			continue
		}
		text := ""
		if str, ok := x.(string); ok {
			text = str
		} else {
			raw, _ := json.Marshal(x)
			text = string(raw)
		}
		note(path, text, false)
	}
}

// draftState picks the state field: a leaf named state or status with a
// few distinct values; failing that, an object present on some records
// only (a response written on completion), read through its first leaf;
// failing that, an HTTP status on every record (a stored response).
func draftState(paths []*pathStats, read int) (state, presence *pathStats) {
	state = firstPath(paths, func(ps *pathStats) bool {
		return !ps.object && named(ps.path, "state", "status") && len(distinct(ps.values)) <= 8 && !allHTTPStatus(ps.values)
	})
	if state != nil {
		return state, nil
	}
	for _, ps := range paths {
		if ps.object && ps.seen > 0 && ps.seen < read && !strings.Contains(ps.path, ".") {
			for _, leaf := range paths {
				if strings.HasPrefix(leaf.path, ps.path+".") && !leaf.object && leaf.seen == ps.seen {
					return nil, leaf
				}
			}
		}
	}
	return nil, firstPath(paths, func(ps *pathStats) bool {
		return ps.seen == read && named(ps.path, "statuscode", "status_code", "status") && allHTTPStatus(ps.values)
	})
}

func firstPath(paths []*pathStats, ok func(*pathStats) bool) *pathStats {
	for _, ps := range paths {
		if ok(ps) {
			return ps
		}
	}
	return nil
}

// named reports whether a path's last segment is one of names (any case).
func named(path string, names ...string) bool {
	last := strings.ToLower(path[strings.LastIndexByte(path, '.')+1:])
	for _, n := range names {
		if last == n {
			return true
		}
	}
	return false
}

func allHTTPStatus(vals []string) bool {
	if len(vals) == 0 {
		return false
	}
	for _, v := range vals {
		n, err := strconv.Atoi(v)
		if err != nil || n < 100 || n > 599 {
			return false
		}
	}
	return true
}

func distinct(vals []string) []string {
	set := map[string]bool{}
	var out []string
	for _, v := range vals {
		if !set[v] {
			set[v] = true
			out = append(out, v)
		}
	}
	sort.Strings(out)
	return out
}

func allMatch(vals []string, re *regexp.Regexp) bool {
	if len(vals) == 0 {
		return false
	}
	for _, v := range vals {
		if !re.MatchString(v) {
			return false
		}
	}
	return true
}

// smallHashes reads whole up to draftSample of the keys that are small
// hashes (at most 64 fields and 64 KiB, measured exactly by HLEN and
// MEMORY USAGE first): two pipelines, and nothing big is ever walked.
func smallHashes(ctx context.Context, c redis.UniversalClient, keys []string) []map[string]string {
	pipe := c.Pipeline()
	lens := make([]*redis.IntCmd, len(keys))
	mems := make([]*redis.IntCmd, len(keys))
	for i, k := range keys {
		lens[i] = pipe.HLen(ctx, k)
		mems[i] = pipe.MemoryUsage(ctx, k, inspect.MemorySamples)
	}
	_, _ = pipe.Exec(ctx) // per-key errors (WRONGTYPE, NOPERM) are read below
	pipe = c.Pipeline()
	var all []*redis.MapStringStringCmd
	for i, k := range keys {
		if len(all) == draftSample {
			break
		}
		n, err := lens[i].Result()
		if err != nil || n == 0 || n > 64 {
			continue // not an idempotency record; never fetch it whole
		}
		if m, err := mems[i].Result(); err == nil && m > 64<<10 {
			continue
		}
		all = append(all, pipe.HGetAll(ctx, k))
	}
	if len(all) == 0 {
		return nil
	}
	_, _ = pipe.Exec(ctx)
	var out []map[string]string
	for _, cmd := range all {
		if m, err := cmd.Result(); err == nil && len(m) > 0 {
			out = append(out, m)
		}
	}
	return out
}

// plainYAML matches what YAML reads as the same plain text.
var plainYAML = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_.\-]*$`)

// yamlScalar writes s as a YAML scalar: plain when that reads back the
// same, else quoted by YAMLQuote.
func yamlScalar(s string) string {
	if plainYAML.MatchString(s) {
		return s
	}
	return inspect.YAMLQuote(s)
}

// capText bounds a string taken from Redis for the proposal.
func capText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.Clone(s[:n])
}
