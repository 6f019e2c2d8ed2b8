// Package pgtest starts a throwaway PostgreSQL server for tests: a fresh
// cluster in a temporary folder, on a free loopback port, run as an
// unprivileged user (postgres refuses root), holding the `orders` table
// the test application writes. It is the source of truth verify hooks
// ask in the integration tests: a real server, never a mock.
//
// A test kit (ARCHITECTURE.md): imported by tests (and the bench harness)
// only; it may import any product package.
package pgtest

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the database/sql driver the tests use ("pgx")

	"github.com/idemctl/idemctl/internal/testkit/redistest"
)

// InstallHint says how to get the server binaries or psql.
const (
	InstallHint       = "PostgreSQL server binaries (initdb, postgres) not found under /usr/lib/postgresql/*/bin: install with: apt-get install -y postgresql (or run bash .ci/test)"
	PsqlInstallHint   = "psql not found in PATH: install with: apt-get install -y postgresql-client (or run bash .ci/test)"
	superuser         = "idemctl"
	database          = "shop"
	startLimit        = 30 * time.Second
	runAsWhenRoot     = "nobody"
	binDirEnvOverride = "IDEMCTL_TEST_PGBIN" // a folder holding initdb and postgres
)

// OrdersSQL is the file, from the module's root, that creates the table
// the test application writes and examples/verify-orders asks: the one
// the docs give, so the table the tests triage against cannot drift from
// it.
const OrdersSQL = "examples/orders.sql"

// OrdersTable reads OrdersSQL: one order per (principal, idempotency
// key), with the response it replays.
func OrdersTable() (string, error) {
	root, err := moduleRoot()
	if err != nil {
		return "", err
	}
	b, err := os.ReadFile(filepath.Join(root, OrdersSQL))
	if err != nil {
		return "", fmt.Errorf("pgtest: the orders table: %v", err)
	}
	return string(b), nil
}

// moduleRoot is the folder holding idemctl's go.mod: up from the working
// directory (a test runs in its package's folder, the bench at the root),
// else up from this file's.
func moduleRoot() (string, error) {
	var starts []string
	if wd, err := os.Getwd(); err == nil {
		starts = append(starts, wd)
	}
	if _, file, _, ok := runtime.Caller(0); ok {
		starts = append(starts, filepath.Dir(file))
	}
	for _, dir := range starts {
		for d := dir; ; d = filepath.Dir(d) {
			if b, err := os.ReadFile(filepath.Join(d, "go.mod")); err == nil && strings.HasPrefix(string(b), "module github.com/idemctl/idemctl\n") {
				return d, nil
			}
			if filepath.Dir(d) == d {
				break
			}
		}
	}
	return "", fmt.Errorf("pgtest: the idemctl module's root (holding %s) not found above %s", OrdersSQL, strings.Join(starts, " or "))
}

// EffectsTable is what the test stream consumer (appsim.Consumer) does
// per event: one row per effect applied. No unique key on event_id, on
// purpose: an event processed twice shows as two rows.
const EffectsTable = `CREATE TABLE effects (
	id         bigserial PRIMARY KEY,
	event_id   text NOT NULL,
	stream_id  text NOT NULL,
	consumer   text NOT NULL,
	amount     bigint NOT NULL,
	created_at timestamptz NOT NULL DEFAULT now()
)`

// Server is one running postgres.
type Server struct {
	Host     string
	Port     int
	User     string // a superuser, trusted on loopback
	Database string
	Dir      string // data folder, removed by Stop

	pid    int
	exited chan struct{}
	db     *sql.DB
	once   sync.Once
}

// BinDir finds the folder with initdb and postgres: $IDEMCTL_TEST_PGBIN,
// else the newest /usr/lib/postgresql/N/bin.
func BinDir() (string, error) {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	if d := os.Getenv(binDirEnvOverride); d != "" {
		dirs = []string{d}
	}
	sort.Slice(dirs, func(i, j int) bool { return pgVersion(dirs[i]) > pgVersion(dirs[j]) })
	for _, d := range dirs {
		if isExec(filepath.Join(d, "initdb")) && isExec(filepath.Join(d, "postgres")) {
			return d, nil
		}
	}
	return "", errors.New(InstallHint)
}

func pgVersion(binDir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return n
}

func isExec(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir() && st.Mode()&0o111 != 0
}

// Psql is the psql client's path, or an error with the install hint.
func Psql() (string, error) {
	p, err := exec.LookPath("psql")
	if err != nil {
		return "", errors.New(PsqlInstallHint)
	}
	return p, nil
}

// Start creates a cluster, starts it and creates the orders table.
func Start() (*Server, error) {
	bin, err := BinDir()
	if err != nil {
		return nil, err
	}
	cred, err := credential()
	if err != nil {
		return nil, err
	}
	s, err := start(bin, cred)
	for tries := 1; err != nil && tries < 3; tries++ { // the free port may be taken before postgres binds it
		s, err = start(bin, cred)
	}
	return s, err
}

// credential is who postgres runs as: nobody when the tests run as root
// (postgres refuses root), else the current user (nil).
func credential() (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup(runAsWhenRoot)
	if err != nil {
		return nil, fmt.Errorf("pgtest: running as root, postgres needs an unprivileged user and %q was not found: %v", runAsWhenRoot, err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), Groups: []uint32{}}, nil
}

func start(bin string, cred *syscall.Credential) (*Server, error) {
	base := os.TempDir()
	if cred != nil {
		base = "/tmp" // reachable by the unprivileged user whatever TMPDIR is
	}
	dir, err := os.MkdirTemp(base, "idemctl-pg-")
	if err != nil {
		return nil, err
	}
	data := filepath.Join(dir, "data")
	if cred != nil {
		if err := os.Chown(dir, int(cred.Uid), int(cred.Gid)); err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
	}
	run := func(name string, args ...string) *exec.Cmd {
		cmd := exec.Command(filepath.Join(bin, name), args...)
		cmd.Dir = dir
		cmd.Env = []string{"LC_ALL=C", "TZ=UTC", "PATH=" + os.Getenv("PATH")}
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Setpgid: true, Pdeathsig: syscall.SIGKILL}
		return cmd
	}
	if out, err := run("initdb", "-D", data, "-U", superuser, "-A", "trust", "-E", "UTF8", "--no-locale", "-N").CombinedOutput(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("pgtest: initdb: %v: %s", err, lastLines(out))
	}
	port, err := redistest.FreePort()
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	logPath := filepath.Join(dir, "postgres.log")
	logf, err := os.Create(logPath)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	defer logf.Close()
	cmd := run("postgres", "-D", data, "-p", strconv.Itoa(port), "-c", "listen_addresses=127.0.0.1",
		"-c", "unix_socket_directories="+dir, "-c", "fsync=off", "-c", "synchronous_commit=off",
		"-c", "full_page_writes=off", "-c", "max_connections=100", "-c", "shared_buffers=32MB")
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("pgtest: starting postgres: %v", err)
	}
	s := &Server{Host: "127.0.0.1", Port: port, User: superuser, Database: database, Dir: dir, pid: cmd.Process.Pid, exited: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(s.exited) }()
	if err := s.setUp(); err != nil {
		s.Stop()
		log, _ := os.ReadFile(logPath)
		return nil, fmt.Errorf("pgtest: %v: %s", err, lastLines(log))
	}
	return s, nil
}

// setUp waits for the server, creates the database and the orders table.
func (s *Server) setUp() error {
	admin, err := sql.Open("pgx", s.dsn("postgres"))
	if err != nil {
		return err
	}
	defer admin.Close()
	deadline := time.Now().Add(startLimit)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		err = admin.PingContext(ctx)
		cancel()
		if err == nil {
			break
		}
		select {
		case <-s.exited:
			return errors.New("postgres exited while starting")
		default:
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not ready after %s: %v", startLimit, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if _, err := admin.Exec("CREATE DATABASE " + s.Database); err != nil {
		return fmt.Errorf("CREATE DATABASE: %v", err)
	}
	s.db, err = sql.Open("pgx", s.dsn(s.Database))
	if err != nil {
		return err
	}
	orders, err := OrdersTable()
	if err != nil {
		return err
	}
	if _, err := s.db.Exec(orders); err != nil {
		return fmt.Errorf("creating the orders table: %v", err)
	}
	if _, err := s.db.Exec(EffectsTable); err != nil {
		return fmt.Errorf("creating the effects table: %v", err)
	}
	return nil
}

func (s *Server) dsn(db string) string {
	return fmt.Sprintf("host=%s port=%d user=%s dbname=%s sslmode=disable connect_timeout=5", s.Host, s.Port, s.User, db)
}

// DSN is the connection string (key=value) of the test database.
func (s *Server) DSN() string { return s.dsn(s.Database) }

// DB is a pool on the test database (closed by Stop).
func (s *Server) DB() *sql.DB { return s.db }

// Env is what psql (and so a verify hook using it) needs to reach the
// test database, as NAME=value.
func (s *Server) Env() []string {
	return []string{"PGHOST=" + s.Host, "PGPORT=" + strconv.Itoa(s.Port), "PGUSER=" + s.User,
		"PGDATABASE=" + s.Database, "PGCONNECT_TIMEOUT=5", "PGSSLMODE=disable"}
}

// Stop shuts the server down (fast shutdown, then SIGKILL to its process
// group) and removes its folder.
func (s *Server) Stop() {
	s.once.Do(func() {
		if s.db != nil {
			s.db.Close()
		}
		_ = syscall.Kill(s.pid, syscall.SIGINT)
		select {
		case <-s.exited:
		case <-time.After(10 * time.Second):
		}
		_ = syscall.Kill(-s.pid, syscall.SIGKILL)
		<-s.exited
		os.RemoveAll(s.Dir)
	})
}

// Own starts a server for one test and stops it when the test ends. A
// missing PostgreSQL fails the test with the install hint, never skips.
func Own(t testing.TB) *Server {
	t.Helper()
	s, err := Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	return s
}

// lastLines is the end of a log, for an error message.
func lastLines(b []byte) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) > 5 {
		lines = lines[len(lines)-5:]
	}
	return strings.Join(lines, " | ")
}
