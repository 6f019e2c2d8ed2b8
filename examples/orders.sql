-- The orders table examples/verify-orders asks (docs/writes.md, Triage):
-- one order per (principal, idempotency key), with the response a retry
-- replays. The hook reads id, status, response and created_at by
-- principal and idem_key; amount is the test application's.
--
--   createdb shop && psql -d shop -f examples/orders.sql
--
-- The test kit (internal/testkit/pgtest) creates its table from this file,
-- so the table the tests triage against is the one documented here.
CREATE TABLE orders (
    id         bigserial PRIMARY KEY,
    principal  text NOT NULL,
    idem_key   text NOT NULL,
    amount     bigint NOT NULL,
    status     int NOT NULL,
    response   text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (principal, idem_key)
);
