package pgtest

import (
	"os"
	"os/exec"
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
