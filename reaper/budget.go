package reaper

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/idemctl/idemctl/internal/units"
)

// budgetWindow is the span the per-hour budget counts over.
const budgetWindow = time.Hour

// budget is a rule's hourly budget, kept in Redis beside the lease so that
// every copy, and every cron run, spends from the same one: a sorted set of
// the writes made, scored by the server's clock, trimmed to the last hour.
type budget struct {
	key   string
	limit int
}

func budgetFor(p *Policy, r *Rule) budget {
	return budget{key: "idemctl:reap:budget:" + p.Name + ":" + r.KeyspaceName + ":" + string(r.Action), limit: r.PerHour}
}

// remaining is how many writes the budget still allows now, and the
// server's clock. It only reads (a dry run writes nothing).
func (b budget) remaining(ctx context.Context, c redis.UniversalClient) (int, int64, error) {
	now, err := c.Time(ctx).Result()
	if err != nil {
		return 0, 0, budgetErr(err)
	}
	ms := now.UnixMilli()
	n, err := c.ZCount(ctx, b.key, "("+strconv.FormatInt(ms-budgetWindow.Milliseconds(), 10), "+inf").Result()
	if err != nil {
		return 0, 0, budgetErr(err)
	}
	return max(b.limit-int(n), 0), ms, nil
}

// spend records n writes made at nowMs.
func (b budget) spend(ctx context.Context, c redis.UniversalClient, keys []string, nowMs int64) error {
	if len(keys) == 0 {
		return nil
	}
	zs := make([]redis.Z, len(keys))
	for i, k := range keys {
		zs[i] = redis.Z{Score: float64(nowMs), Member: fmt.Sprintf("%d:%d:%s", nowMs, i, k)}
	}
	pipe := c.TxPipeline()
	pipe.ZAdd(ctx, b.key, zs...)
	pipe.ZRemRangeByScore(ctx, b.key, "-inf", strconv.FormatInt(nowMs-budgetWindow.Milliseconds(), 10))
	pipe.PExpire(ctx, b.key, budgetWindow+time.Minute)
	if _, err := pipe.Exec(ctx); err != nil {
		return budgetErr(err)
	}
	return nil
}

func budgetErr(err error) error {
	msg := units.OneLine(err.Error())
	if aclRefusal(msg) {
		msg += " — the reaper's ACL user needs time, zcount, zadd, zremrangebyscore, pexpire, multi and exec on idemctl:reap:* (see the ACL roles, docs/acl-roles.md)"
	}
	return fmt.Errorf("hourly budget: %s", msg)
}
