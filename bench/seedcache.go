package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/internal/appsim"
)

// A seed cache (-seed-cache DIR) keeps a seeded keyspace as an RDB file
// with a JSON file beside it (what the seed wrote, when, and what a
// correct stats must report), so that a later run with the same
// parameters on the same server version loads it instead of seeding:
// seconds instead of minutes at 10M records.

// cacheFormat changes whenever what a cached file holds or means does.
const cacheFormat = 1

// maxRunTime is the longest a harness run is taken to last: a loaded
// dataset must still be exactly as seeded at the run's end.
const maxRunTime = 3 * time.Hour

// cacheRDB is the file name the harness's server saves to and loads from
// in its own directory (the cache's file is linked there to be loaded).
const cacheRDB = "seed.rdb"

// seedPlan is one seeding worker's share: count records from random seed
// w+1 (so each worker writes its own run id into the keys).
func seedPlan(count, w int) appsim.Plan {
	return appsim.Plan{Schema: "atlasmart", Count: count,
		ReserveTTL: reserveTTL, ProcessingTimeout: processingTimeout, Retention: retention,
		LargeResponse: inspect.DefaultLargeResponse, RandSeed: uint64(w + 1), Batch: 1000}
}

// seedShares splits n records over the seeding workers.
func seedShares(n, workers int) []int {
	workers = max(min(workers, n/1000), 1)
	out := make([]int, workers)
	for w := range out {
		out[w] = n / workers
	}
	out[workers-1] = n - n/workers*(workers-1)
	return out
}

// cacheKey is everything that decides what a seed writes and whether a
// server can load it: a cached file is used only when all of it matches.
type cacheKey struct {
	Format            int                     `json:"format"`
	N                 int                     `json:"n"`
	Schema            string                  `json:"schema"`
	Shares            []int                   `json:"shares"`
	RandSeeds         []uint64                `json:"rand_seeds"`
	ReserveTTL        time.Duration           `json:"reserve_ttl_ns"`
	ProcessingTimeout time.Duration           `json:"processing_timeout_ns"`
	Retention         time.Duration           `json:"retention_ns"`
	LargeResponse     int64                   `json:"large_response"`
	Batch             int                     `json:"batch"`
	Mix               map[appsim.Kind]float64 `json:"mix"`
	Server            string                  `json:"server"` // e.g. "redis 7.0.15", "valkey 8.1.1"
}

func newCacheKey(n int, server string) cacheKey {
	k := cacheKey{Format: cacheFormat, N: n, Shares: seedShares(n, seedWorkers), Mix: appsim.DefaultMix, Server: server}
	for w, count := range k.Shares {
		p := seedPlan(count, w)
		k.Schema, k.ReserveTTL, k.ProcessingTimeout, k.Retention = p.Schema, p.ReserveTTL, p.ProcessingTimeout, p.Retention
		k.LargeResponse, k.Batch = p.LargeResponse, p.Batch
		k.RandSeeds = append(k.RandSeeds, p.RandSeed)
	}
	return k
}

// name is the cached files' name without extension: readable parts
// (schema, N, server) and a digest of the whole key.
func (k cacheKey) name() string {
	b, _ := json.Marshal(k)
	sum := sha256.Sum256(b)
	server := strings.NewReplacer(" ", "-", "/", "-").Replace(k.Server)
	return fmt.Sprintf("seed-%s-n%d-%s-%s", k.Schema, k.N, server, hex.EncodeToString(sum[:])[:12])
}

// stable is how long after seeding the cached records stay as seeded.
func (k cacheKey) stable() time.Duration {
	return seedPlan(k.N, 0).Stable()
}

// cacheEntry is the JSON file beside a cached RDB.
type cacheEntry struct {
	Key          cacheKey              `json:"key"`
	SeedStarted  time.Time             `json:"seed_started"` // records' ages count from here
	SeedDuration time.Duration         `json:"seed_duration_ns"`
	UsedMemory   int64                 `json:"redis_used_memory"`
	Expected     appsim.Expected       `json:"expected"`
	Kinds        map[appsim.Kind]int64 `json:"kinds"`
}

// CacheInfo says whether the keyspace came from the seed cache.
type CacheInfo struct {
	File        string        `json:"file"`
	Loaded      bool          `json:"loaded"` // false: seeded now and saved to File
	LoadTime    time.Duration `json:"load_ns,omitempty"`
	SaveTime    time.Duration `json:"save_ns,omitempty"`
	SeedStarted time.Time     `json:"seed_started"`
	Refused     string        `json:"refused,omitempty"` // why an existing file was not used
}

// serverName is the server's name and version, from the report's
// RedisVersion ("7.0.15" or "valkey 8.1.1").
func serverName(version string) string {
	if strings.Contains(version, " ") {
		return version
	}
	return "redis " + version
}

func (h *harness) cachePaths() (rdb, meta string) {
	base := filepath.Join(h.cfg.SeedCache, newCacheKey(h.cfg.N, serverName(h.res.RedisVersion)).name())
	return base + ".rdb", base + ".json"
}

// usable says why a cache entry cannot stand for a fresh seed of key, or
// "" when it can.
func (e cacheEntry) usable(key cacheKey, now time.Time) string {
	a, _ := json.Marshal(e.Key)
	b, _ := json.Marshal(key)
	if string(a) != string(b) {
		return "it was seeded with other parameters"
	}
	age := now.Sub(e.SeedStarted)
	limit := key.stable() - maxRunTime
	if age < 0 || age > limit {
		return fmt.Sprintf("it was seeded %v ago, and its records stay as seeded for %v after seeding (fresh ones then turn stale), "+
			"which must cover a run of up to %v: it is older than %v", age.Round(time.Minute), key.stable(), maxRunTime, limit)
	}
	return ""
}

// cached reads this run's cache entry: nil error when it is usable, else
// why not (os.ErrNotExist: there is none).
func (h *harness) cached() (cacheEntry, error) {
	rdb, meta := h.cachePaths()
	var e cacheEntry
	b, err := os.ReadFile(meta)
	if err != nil {
		return e, err
	}
	if err := json.Unmarshal(b, &e); err != nil {
		return e, fmt.Errorf("%s is not a seed cache entry (%v)", meta, err)
	}
	if why := e.usable(newCacheKey(h.cfg.N, serverName(h.res.RedisVersion)), time.Now()); why != "" {
		return e, errors.New(why)
	}
	if _, err := os.Stat(rdb); err != nil {
		return e, fmt.Errorf("its RDB file is unreadable (%v)", err) // not os.ErrNotExist: the entry exists
	}
	return e, nil
}

// cacheUsable reports whether the seed cache holds a usable copy of this
// run's keyspace (for the estimate; loadCache decides).
func (h *harness) cacheUsable() bool {
	_, err := h.cached()
	return h.cfg.SeedCache != "" && err == nil
}

// loadCache loads the cached keyspace into the (empty) server when a
// usable one exists, and reports whether it did. A file it cannot use is
// named with the reason, and the run seeds afresh and replaces it.
func (h *harness) loadCache(ctx context.Context) (bool, error) {
	rdb, _ := h.cachePaths()
	key := newCacheKey(h.cfg.N, serverName(h.res.RedisVersion))
	h.res.Seed.Cache = &CacheInfo{File: rdb}
	refuse := func(why string) (bool, error) {
		h.res.Seed.Cache.Refused = why
		h.cfg.logf("seed cache: not using %s: %s; seeding afresh and replacing it", rdb, why)
		return false, nil
	}
	e, err := h.cached()
	switch {
	case errors.Is(err, os.ErrNotExist):
		h.cfg.logf("seed cache: no %s yet: seeding, then saving it", filepath.Base(rdb))
		return false, nil
	case err != nil:
		return refuse(err.Error())
	}
	link := filepath.Join(h.srv.Dir, cacheRDB)
	if err := os.Symlink(rdb, link); err != nil {
		return false, err
	}
	defer os.Remove(link)
	start := time.Now()
	slow := h.slowClient()
	defer slow.Close()
	if err := slow.Do(ctx, "debug", "reload", "nosave").Err(); err != nil {
		return false, fmt.Errorf("loading %s (delete it to seed afresh): %w", rdb, err)
	}
	n, err := h.client.DBSize(ctx).Result()
	if err != nil {
		return false, err
	}
	if n != int64(h.cfg.N) {
		if err := h.client.FlushAll(ctx).Err(); err != nil {
			return false, err
		}
		return refuse(fmt.Sprintf("it loaded %d keys, not %d", n, h.cfg.N))
	}
	c := h.res.Seed.Cache
	c.Loaded, c.LoadTime, c.SeedStarted = true, time.Since(start), e.SeedStarted
	h.res.Seed.Duration, h.res.Seed.Expected, h.res.Seed.Kinds = e.SeedDuration, e.Expected, e.Kinds
	h.res.Seed.RecordsPerSec = float64(h.cfg.N) / e.SeedDuration.Seconds()
	h.res.Seed.UsedMemory = usedMemory(ctx, h.client)
	h.cfg.logf("seed cache: loaded %d records from %s in %v (seeded %v ago; usable until %v after seeding)",
		n, rdb, c.LoadTime.Round(time.Millisecond), time.Since(e.SeedStarted).Round(time.Minute), key.stable()-maxRunTime)
	return true, nil
}

// saveCache saves the verified, freshly seeded keyspace (SAVE: no fork,
// no second copy of the dataset in memory) and moves the RDB into the
// cache with its JSON; the JSON is written last, so an entry is complete
// or absent.
func (h *harness) saveCache(ctx context.Context) error {
	if c := h.res.Seed.Cache; c == nil || c.Loaded {
		return nil
	}
	rdb, meta := h.cachePaths()
	if err := os.MkdirAll(h.cfg.SeedCache, 0o755); err != nil {
		return err
	}
	os.Remove(meta) // an entry being replaced is invalid from here on
	start := time.Now()
	slow := h.slowClient()
	defer slow.Close()
	if err := slow.Save(ctx).Err(); err != nil {
		return fmt.Errorf("SAVE: %w", err)
	}
	if err := moveFile(filepath.Join(h.srv.Dir, cacheRDB), rdb); err != nil {
		return err
	}
	s := h.res.Seed
	b, err := json.MarshalIndent(cacheEntry{Key: newCacheKey(h.cfg.N, serverName(h.res.RedisVersion)), SeedStarted: s.Cache.SeedStarted,
		SeedDuration: s.Duration, UsedMemory: s.UsedMemory, Expected: s.Expected, Kinds: s.Kinds}, "", "  ")
	if err != nil {
		return err
	}
	if err := writeFileAtomic(meta, append(b, '\n')); err != nil {
		return err
	}
	s.Cache.SaveTime = time.Since(start)
	fi, _ := os.Stat(rdb)
	h.cfg.logf("seed cache: saved %s (%.0f MB) in %v", rdb, float64(fi.Size())/1e6, s.Cache.SaveTime.Round(time.Millisecond))
	return nil
}

// slowClient waits as long as loading or saving the dataset takes.
func (h *harness) slowClient() *redis.Client {
	return redis.NewClient(&redis.Options{Addr: h.srv.Addr, DisableIdentity: true, ReadTimeout: time.Hour, PoolSize: 1})
}

// moveFile renames src to dst, copying when they are on different
// filesystems.
func moveFile(src, dst string) error {
	tmp := dst + ".tmp"
	if err := os.Rename(src, tmp); err != nil {
		in, err := os.Open(src)
		if err != nil {
			return err
		}
		defer in.Close()
		out, err := os.Create(tmp)
		if err != nil {
			return err
		}
		if _, err := io.Copy(out, in); err != nil {
			out.Close()
			return err
		}
		if err := out.Close(); err != nil {
			return err
		}
	}
	return os.Rename(tmp, dst)
}

func writeFileAtomic(path string, data []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
