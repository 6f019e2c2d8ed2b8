package pgtest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestServerHoldsOrdersAndPsqlReachesIt(t *testing.T) {
	s := Own(t)
	st, err := os.Stat(s.Dir + "/data")
	if err != nil {
		t.Fatal(err)
	}
	if uid := st.Sys().(*syscall.Stat_t).Uid; uid == 0 {
		t.Fatal("the cluster is owned by root: postgres must run unprivileged")
	}
	ctx := t.Context()
	if _, err := s.DB().ExecContext(ctx, `INSERT INTO orders (principal, idem_key, amount, status, response) VALUES ($1, $2, 100, 201, '{}')`, "alice", "k1"); err != nil {
		t.Fatal(err)
	}
	psql, err := Psql()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(psql, "-XAtqc", "SELECT principal || ':' || idem_key FROM orders")
	cmd.Env = append(os.Environ(), s.Env()...)
	out, err := cmd.CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "alice:k1" {
		t.Fatalf("psql: %v: %s", err, out)
	}
	dir := s.Dir
	s.Stop()
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("%s left behind: %v", dir, err)
	}
}

func TestMissingBinariesSayHowToInstall(t *testing.T) {
	t.Setenv(binDirEnvOverride, t.TempDir())
	_, err := Start()
	if err == nil || !strings.Contains(err.Error(), "install with: apt-get install -y postgresql") {
		t.Fatalf("got %v", err)
	}
}

// The table the tests triage against is created from examples/orders.sql,
// and that file's CREATE TABLE is the one docs/writes.md gives and the
// README names: a newcomer who creates it from the docs runs the
// example hook against the same table the tests do.
func TestOrdersTableIsTheDocumentedOne(t *testing.T) {
	ddl, err := OrdersTable()
	if err != nil {
		t.Fatal(err)
	}
	stmt := ddl[strings.Index(ddl, "CREATE TABLE orders"):]
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	writes, err := os.ReadFile(filepath.Join(root, "docs", "writes.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(writes), "```sql\n"+stmt+"```") {
		t.Errorf("docs/writes.md does not give the orders table of %s:\n%s", OrdersSQL, stmt)
	}
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(readme), "("+OrdersSQL+")") {
		t.Errorf("README.md does not link %s", OrdersSQL)
	}
	// Every column the example hook reads is in the table.
	hook, err := os.ReadFile(filepath.Join(root, "examples", "verify-orders"))
	if err != nil {
		t.Fatal(err)
	}
	for _, col := range []string{"id", "status", "response", "created_at", "principal", "idem_key"} {
		if !strings.Contains(string(hook), col) || !strings.Contains(stmt, "\n    "+col+" ") {
			t.Errorf("column %s: read by examples/verify-orders, not in %s", col, OrdersSQL)
		}
	}
}
