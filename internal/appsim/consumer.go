package appsim

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// ErrCrashed is what Consumer.Run returns when it stops at a crash point
// without a Crash hook: the entry it held stays pending, as it would for a
// process that died.
var ErrCrashed = errors.New("consumer crashed mid-message")

// ConsumerConfig is one consumer of a stream's consumer group.
type ConsumerConfig struct {
	Stream, Group, Consumer string
	// Event IDs at which the consumer dies: after reading the entry and
	// before its effect (nothing happened), or after the effect and before
	// the ledger and XACK (the effect happened; the entry stays pending).
	CrashBeforeEffect, CrashAfterEffect []string
	// Crash is called at a crash point; a child process kills itself
	// there (kill -9). nil: Run returns ErrCrashed.
	Crash func() `json:"-"`
	// Ledger is the zset dedupe ledger (event IDs scored by processing
	// time in ms) checked before the effect and written after it; "" none.
	Ledger string
	// AutoClaimIdle runs an XAUTOCLAIM loop claiming entries idle this
	// long; 0 leaves a dead consumer's entries pending for good.
	AutoClaimIdle time.Duration
	// Idle: Run returns once no entry came for this long (0: runs until ctx ends).
	Idle time.Duration
}

// Consumer is a payments-events worker: per entry, it checks the dedupe
// ledger, applies the business effect (a row in PostgreSQL's effects
// table), records the event in the ledger and acknowledges it — and may
// crash in between. Events whose kind is "poison" always fail.
type Consumer struct {
	rc  redis.UniversalClient
	db  *sql.DB
	cfg ConsumerConfig
}

// NewConsumer prepares a consumer; it reads nothing until Run.
func NewConsumer(rc redis.UniversalClient, db *sql.DB, cfg ConsumerConfig) *Consumer {
	return &Consumer{rc: rc, db: db, cfg: cfg}
}

// Run reads the consumer's own pending entries first (what it was handed
// before it restarted, or what an operator claimed to it), then new
// entries, until ctx ends, Idle passes with nothing to do, or a crash.
func (c *Consumer) Run(ctx context.Context) error {
	if err := c.drain(ctx); err != nil {
		return err
	}
	quiet := time.Now()
	for ctx.Err() == nil {
		if c.cfg.AutoClaimIdle > 0 {
			if err := c.autoClaim(ctx); err != nil {
				return err
			}
		}
		_, got, err := c.read(ctx, ">")
		if err != nil {
			return err
		}
		if got > 0 {
			quiet = time.Now()
		} else if c.cfg.Idle > 0 && time.Since(quiet) > c.cfg.Idle {
			return nil
		}
	}
	return nil
}

// drain handles the consumer's own pending entries, oldest first: each
// read asks for those after the last one handled, so an entry that failed
// again (a poison message) is not read twice in one pass.
func (c *Consumer) drain(ctx context.Context) error {
	for after := "0"; ; {
		last, _, err := c.read(ctx, after)
		if err != nil || last == "" {
			return err
		}
		after = last
	}
}

// read takes one entry (COUNT 1: a crash leaves exactly that one pending)
// after id (">" for new ones), and returns its ID ("" none).
func (c *Consumer) read(ctx context.Context, id string) (string, int, error) {
	block := time.Duration(-1)
	if id == ">" {
		block = 100 * time.Millisecond
	}
	res, err := c.rc.XReadGroup(ctx, &redis.XReadGroupArgs{Group: c.cfg.Group, Consumer: c.cfg.Consumer,
		Streams: []string{c.cfg.Stream, id}, Count: 1, Block: block}).Result()
	if errors.Is(err, redis.Nil) || (err != nil && ctx.Err() != nil) {
		return "", 0, nil
	}
	if err != nil {
		return "", 0, err
	}
	last, n := "", 0
	for _, s := range res {
		for _, m := range s.Messages {
			if err := c.handle(ctx, m); err != nil {
				return m.ID, n, err
			}
			last, n = m.ID, n+1
		}
	}
	return last, n, nil
}

// autoClaim claims entries idle past AutoClaimIdle to this consumer and
// handles them (the retry loop a consumer without it lacks).
func (c *Consumer) autoClaim(ctx context.Context) error {
	msgs, _, err := c.rc.XAutoClaim(ctx, &redis.XAutoClaimArgs{Stream: c.cfg.Stream, Group: c.cfg.Group,
		Consumer: c.cfg.Consumer, MinIdle: c.cfg.AutoClaimIdle, Start: "0", Count: 10}).Result()
	if err != nil {
		return err
	}
	for _, m := range msgs {
		if err := c.handle(ctx, m); err != nil {
			return err
		}
	}
	return nil
}

// handle is one entry: dedupe, effect, ledger, ack, with the crash points.
// A poison event fails without an ack, to be delivered again.
func (c *Consumer) handle(ctx context.Context, m redis.XMessage) error {
	event, _ := m.Values["event_id"].(string)
	if c.cfg.Ledger != "" {
		if _, err := c.rc.ZScore(ctx, c.cfg.Ledger, event).Result(); err == nil {
			return c.rc.XAck(ctx, c.cfg.Stream, c.cfg.Group, m.ID).Err() // a duplicate delivery
		}
	}
	if slices.Contains(c.cfg.CrashBeforeEffect, event) {
		return c.crash()
	}
	if kind, _ := m.Values["kind"].(string); kind == "poison" {
		return nil
	}
	amount, _ := strconv.ParseInt(fmt.Sprint(m.Values["amount"]), 10, 64)
	if _, err := c.db.ExecContext(ctx, `INSERT INTO effects (event_id, stream_id, consumer, amount) VALUES ($1, $2, $3, $4)`,
		event, m.ID, c.cfg.Consumer, amount); err != nil {
		return err
	}
	if slices.Contains(c.cfg.CrashAfterEffect, event) {
		return c.crash()
	}
	if c.cfg.Ledger != "" {
		if err := c.rc.ZAdd(ctx, c.cfg.Ledger, redis.Z{Score: float64(time.Now().UnixMilli()), Member: event}).Err(); err != nil {
			return err
		}
	}
	return c.rc.XAck(ctx, c.cfg.Stream, c.cfg.Group, m.ID).Err()
}

func (c *Consumer) crash() error {
	if c.cfg.Crash != nil {
		c.cfg.Crash()
	}
	return ErrCrashed
}

// PaymentEvent is one message a producer publishes.
type PaymentEvent struct {
	ID     string // the business event ID (not the stream entry's ID)
	Amount int64
	Poison bool // a message no consumer can handle
}

// Publish XADDs events to stream and returns their entry IDs, in order.
func Publish(ctx context.Context, rc redis.UniversalClient, stream string, events []PaymentEvent) ([]string, error) {
	pipe := rc.Pipeline()
	cmds := make([]*redis.StringCmd, len(events))
	for i, e := range events {
		kind := "payment.captured"
		if e.Poison {
			kind = "poison"
		}
		cmds[i] = pipe.XAdd(ctx, &redis.XAddArgs{Stream: stream, Values: []any{"event_id", e.ID, "kind", kind, "amount", e.Amount}})
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return nil, err
	}
	ids := make([]string, len(cmds))
	for i, cmd := range cmds {
		ids[i] = cmd.Val()
	}
	return ids, nil
}

// TrimLedger is the consumer's trim job: it drops the ledger's entries
// processed more than window ago (by the server's clock) and says how many.
func TrimLedger(ctx context.Context, rc redis.UniversalClient, ledger string, window time.Duration) (int64, error) {
	now, err := rc.Time(ctx).Result()
	if err != nil {
		return 0, err
	}
	cutoff := now.Add(-window).UnixMilli()
	return rc.ZRemRangeByScore(ctx, ledger, "-inf", fmt.Sprintf("(%d", cutoff)).Result()
}
