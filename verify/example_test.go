package verify

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/idemctl/idemctl/internal/pgtest"
)

// The example hook against a real PostgreSQL: done with the order's id,
// status and response; not_done without an order; a hostile key stays
// data; unknown, with the database's reason, once the server is gone.
func TestExampleVerifyOrders(t *testing.T) {
	if _, err := pgtest.Psql(); err != nil {
		t.Fatal(err)
	}
	pg := pgtest.Own(t)
	var id int64
	err := pg.DB().QueryRow(`INSERT INTO orders (principal, idem_key, amount, status, response) VALUES ('alice', 'k1', 5, 201, '{"order_id":1}') RETURNING id`).Scan(&id)
	if err != nil {
		t.Fatal(err)
	}
	script, _ := filepath.Abs("../examples/verify-orders")
	h := Hook{Command: []string{script, "{principal}", "{idem_key}"}, Timeout: 10 * time.Second, Env: pg.Env()}
	ctx := context.Background()

	r := h.Verify(ctx, record(t, "atlasmart:ch23:idem:alice:POST:/orders:k1"))
	if r.Verdict != Done || r.Ref != strconv.FormatInt(id, 10) || r.Status != 201 || r.Response == nil || *r.Response != `{"order_id":1}` || !strings.HasPrefix(r.Detail, "order 1 created ") {
		t.Fatalf("existing order: %+v", r)
	}
	r = h.Verify(ctx, record(t, "atlasmart:ch23:idem:alice:POST:/orders:k2"))
	if r.Verdict != NotDone || r.Detail != "no order for this idempotency key" {
		t.Fatalf("missing order: %+v", r)
	}
	hostile := "atlasmart:ch23:idem:alice:POST:/orders:k1' OR '1'='1'; DROP TABLE orders; --$(touch x)"
	r = h.Verify(ctx, record(t, hostile))
	if r.Verdict != NotDone {
		t.Fatalf("hostile key: %+v", r)
	}
	if err := pg.DB().QueryRow(`SELECT count(*) FROM orders`).Scan(new(int)); err != nil {
		t.Fatalf("the orders table is gone: %v", err)
	}
	if _, err := os.Stat("x"); err == nil {
		os.Remove("x")
		t.Fatal("record text reached a shell")
	}
	pg.Stop()
	r = h.Verify(ctx, record(t, "atlasmart:ch23:idem:alice:POST:/orders:k1"))
	if r.Verdict != Unknown || !strings.Contains(r.Why, "database error (psql exit 2): psql: error: connection to server at") {
		t.Fatalf("database gone: %+v", r)
	}
}
