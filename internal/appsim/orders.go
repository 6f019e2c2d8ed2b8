package appsim

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// OrdersConfig tunes the orders application. Zero values take the
// defaults; a negative crash share turns that crash off.
type OrdersConfig struct {
	Workers int // requests in flight at once (default 4)
	// Pause between one worker's requests (default 20ms).
	Pause time.Duration
	// Shares of requests whose worker "crashes": after RESERVE, before the
	// order is inserted (no order, record stuck), and after the insert,
	// before COMPLETE (the order exists, the record is stuck).
	CrashBeforeInsert, CrashAfterInsert float64
	ReserveTTL, Retention               time.Duration // whole seconds; default 600s, 900s
	Principals                          int           // default 20
	RandSeed                            uint64
}

// OrderWrite is one request as the application saw it, for a test to
// check against Redis and the database afterwards.
type OrderWrite struct {
	Key, Principal, IdemKey string
	Fingerprint             string
	OrderID                 int64     // 0: no order inserted
	Response                string    // the body COMPLETE stored ("" if it never ran)
	Reserved                time.Time // when RESERVE created the record
}

// OrdersTruth is the application's ground truth: every request by how it
// ended.
type OrdersTruth struct {
	Completed []OrderWrite // order inserted, record SUCCEEDED by COMPLETE
	// CrashedBeforeInsert and CrashedAfterInsert left their records
	// PROCESSING; only the latter have an order.
	CrashedBeforeInsert, CrashedAfterInsert []OrderWrite
	// Refused are completions the COMPLETE script refused (the record had
	// changed under the worker: someone else wrote it): each is a write of
	// the application that was lost.
	Refused []OrderWrite
	Errors  int // failed Redis or database calls
}

// OrdersApp is a service that, for each request, reserves the idempotency
// record, inserts the order in PostgreSQL and completes the record with
// the order as its response — and sometimes crashes in between. It is the
// live traffic of the triage tests: its orders table is the source of
// truth a verify hook asks.
type OrdersApp struct {
	rc  redis.UniversalClient
	db  *sql.DB
	cfg OrdersConfig
	run string

	mu    sync.Mutex
	truth OrdersTruth
	seq   int
}

// NewOrdersApp prepares the application; it does nothing until Run.
func NewOrdersApp(rc redis.UniversalClient, db *sql.DB, cfg OrdersConfig) *OrdersApp {
	if cfg.Workers <= 0 {
		cfg.Workers = 4
	}
	if cfg.Pause <= 0 {
		cfg.Pause = 20 * time.Millisecond
	}
	if cfg.Principals <= 0 {
		cfg.Principals = 20
	}
	cfg.CrashBeforeInsert = share(cfg.CrashBeforeInsert, 0.05)
	cfg.CrashAfterInsert = share(cfg.CrashAfterInsert, 0.05)
	cfg.ReserveTTL = wholeSeconds(cfg.ReserveTTL, 600*time.Second)
	cfg.Retention = wholeSeconds(cfg.Retention, 900*time.Second)
	return &OrdersApp{rc: rc, db: db, cfg: cfg, run: fmt.Sprintf("%04x", rand.Uint32()&0xffff)}
}

// OrderKey is the record key of a request, in the atlasmart layout.
func OrderKey(principal, idemKey string) string {
	return "atlasmart:ch23:idem:" + principal + ":POST:/orders:" + idemKey
}

// Truth returns a copy of the ground truth so far.
func (a *OrdersApp) Truth() OrdersTruth {
	a.mu.Lock()
	defer a.mu.Unlock()
	t := a.truth
	t.Completed = append([]OrderWrite(nil), t.Completed...)
	t.CrashedBeforeInsert = append([]OrderWrite(nil), t.CrashedBeforeInsert...)
	t.CrashedAfterInsert = append([]OrderWrite(nil), t.CrashedAfterInsert...)
	t.Refused = append([]OrderWrite(nil), t.Refused...)
	return t
}

// Run serves requests with cfg.Workers workers until ctx is cancelled;
// a request under way then finishes (it is not counted as a crash).
func (a *OrdersApp) Run(ctx context.Context) {
	var wg sync.WaitGroup
	for w := range a.cfg.Workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(a.cfg.RandSeed, uint64(w)))
			for ctx.Err() == nil {
				a.request(rng)
				select {
				case <-ctx.Done():
				case <-time.After(a.cfg.Pause):
				}
			}
		}()
	}
	wg.Wait()
}

// Serve runs n requests on the calling goroutine (to seed stuck records
// before live traffic starts).
func (a *OrdersApp) Serve(n int) {
	rng := rand.New(rand.NewPCG(a.cfg.RandSeed, 0xfeed))
	for range n {
		a.request(rng)
	}
}

// request is one request: RESERVE, INSERT, COMPLETE, with the crashes.
func (a *OrdersApp) request(rng *rand.Rand) {
	a.mu.Lock()
	a.seq++
	seq := a.seq
	a.mu.Unlock()
	amount := 100 + rng.Int64N(10_000)
	w := OrderWrite{Principal: fmt.Sprintf("customer-%d", 1+rng.IntN(a.cfg.Principals)), IdemKey: fmt.Sprintf("ord-%s-%d", a.run, seq)}
	w.Key = OrderKey(w.Principal, w.IdemKey)
	w.Fingerprint = Fingerprint(fmt.Sprintf(`{"amount":%d}`, amount))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()

	v, err := Reserve.Run(ctx, a.rc, []string{w.Key}, w.Fingerprint, int64(a.cfg.ReserveTTL/time.Second)).Slice()
	if err != nil || len(v) == 0 || v[0] != "STARTED" {
		a.fail()
		return
	}
	w.Reserved = time.Now()
	if rng.Float64() < a.cfg.CrashBeforeInsert {
		a.record(&a.truth.CrashedBeforeInsert, w)
		return
	}
	// The order and the response it replays, in one statement.
	var resp string
	err = a.db.QueryRowContext(ctx, `INSERT INTO orders (id, principal, idem_key, amount, status, response)
		SELECT n, $1, $2, $3, 201, json_build_object('order_id', n, 'amount', $3::bigint, 'state', 'created')::text
		FROM (SELECT nextval('orders_id_seq') AS n) AS s RETURNING id, response`,
		w.Principal, w.IdemKey, amount).Scan(&w.OrderID, &resp)
	if err != nil {
		a.fail()
		return
	}
	if rng.Float64() < a.cfg.CrashAfterInsert {
		a.record(&a.truth.CrashedAfterInsert, w)
		return
	}
	w.Response = resp
	n, err := Complete.Run(ctx, a.rc, []string{w.Key}, w.Fingerprint, 201, w.Response, int64(a.cfg.Retention/time.Second)).Int64()
	switch {
	case err != nil && !errors.Is(err, redis.Nil):
		a.fail()
	case n == 1:
		a.record(&a.truth.Completed, w)
	default:
		a.record(&a.truth.Refused, w)
	}
}

func (a *OrdersApp) record(list *[]OrderWrite, w OrderWrite) {
	a.mu.Lock()
	defer a.mu.Unlock()
	*list = append(*list, w)
}

func (a *OrdersApp) fail() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.truth.Errors++
}
