package cli

import (
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/spf13/pflag"

	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/inspect/rdb"
	"github.com/idemctl/idemctl/inspect/snapshot"
)

// snapFlags read a snapshot (RDB) file instead of a server.
type snapFlags struct {
	path     string
	at       string
	db       int
	versions bool // not a flag: scan -o pinned hashes every value for its version

	// given (resolveFlags): --at and --db given, which need --rdb.
	atGiven, dbGiven bool
}

// resolveFlags records whether --at and --db were given.
func (f *snapFlags) resolveFlags(fs *pflag.FlagSet) {
	f.atGiven, f.dbGiven = fs.Changed("at"), fs.Changed("db")
}

func (f *snapFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&f.path, "rdb", "", "read this snapshot (RDB) file instead of a server, with no load on production; - reads standard input (redis-cli --rdb - | idemctl stats --rdb -)")
	fs.StringVar(&f.at, "at", "", "with --rdb: judge TTLs, ages and staleness at this time (RFC 3339, or Unix seconds) instead of when the snapshot was taken")
	fs.IntVar(&f.db, "db", 0, "with --rdb: the database to read")
}

// serverFlags are the flags that name a server, which --rdb replaces.
var serverFlags = []string{"url", "cluster", "addrs", "sentinel", "read-from-replicas", "user", "password-env", "password-file", "password-prompt", "tls-ca", "tls-insecure"}

// openSnapshot is openSession's half for --rdb: it resolves the keyspaces
// and opens the file in place of a connection: the session has no client,
// and its scans read the file.
func (a *app) openSnapshot(sp sessionSpec) (*session, error) {
	if err := a.checkNoServer(sp.conn); err != nil {
		return nil, err
	}
	cfg, name, prof, err := a.loadProfile(sp.conn.configPath, sp.conn.profile)
	if err != nil {
		return nil, err
	}
	if sp.conn.profileGiven && prof.URL != "" {
		return nil, usageErr("--rdb reads a snapshot file, but profile %s names a server (%s): give one of them", name, inspect.Sanitize(prof.URL))
	}
	s := &session{cfg: cfg, profileName: name, profile: prof, osUser: a.user(), origin: a.origin(), mode: "snapshot"}
	s.scan = scanOptions(sp.scan, prof)
	if s.keyspaces, err = resolveKeyspaces(cfg, prof, sp.keyspace, sp.need); err != nil {
		return nil, err
	}
	if s.snap, err = a.openSnapshotFile(sp.snap); err != nil {
		return nil, err
	}
	s.scan.Snapshot = s.snap
	return s, nil
}

// checkNoServer refuses a server named beside --rdb.
func (a *app) checkNoServer(cf *connFlags) error {
	if cf.serverFlag != "" {
		return usageErr("--rdb reads a snapshot file, --%s names a server: give one of them", cf.serverFlag)
	}
	if cf.url != "" {
		return usageErr("--rdb reads a snapshot file, but %s names a server: unset it, or drop --rdb", a.fromEnv["url"])
	}
	return nil
}

// openSnapshotFile opens the file --rdb names, at --at, database --db.
func (a *app) openSnapshotFile(f *snapFlags) (*snapshot.Source, error) {
	if f.db < 0 {
		return nil, usageErr("--db must be 0 or more")
	}
	spec := snapshot.Spec{Path: f.path, Stdin: a.stdin, DB: f.db, Versions: f.versions}
	if f.at != "" {
		var err error
		if spec.At, err = parseAt(f.at); err != nil {
			return nil, usageErr("--at %q: %v", f.at, err)
		}
	}
	src, err := snapshot.Open(spec)
	if err != nil {
		return nil, snapshotErr(err)
	}
	return src, nil
}

// checkUnused refuses --at and --db without --rdb.
func (f *snapFlags) checkUnused() error {
	for _, x := range []struct {
		name  string
		given bool
	}{{"at", f.atGiven}, {"db", f.dbGiven}} {
		if f.path == "" && x.given {
			return usageErr("--%s is for reading a snapshot: give the file with --rdb", x.name)
		}
	}
	return nil
}

// parseAt reads --at: an RFC 3339 time or Unix seconds.
func parseAt(v string) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339Nano, v); err == nil {
		return t, nil
	}
	if n, err := strconv.ParseInt(v, 10, 64); err == nil && n > 0 {
		return time.Unix(n, 0), nil
	}
	return time.Time{}, errors.New("want an RFC 3339 time (2026-12-05T14:00:00Z) or Unix seconds")
}

// snapshotErr gives a snapshot that cannot be read its exit code, 13: a
// fault in the file, or a file that cannot be opened at all (missing,
// unreadable, a directory) — either way the snapshot cannot be read.
func snapshotErr(err error) error {
	var fe *rdb.FormatError
	var se *snapshot.Error
	if errors.As(err, &fe) || errors.As(err, &se) {
		return codeErr(ExitSnapshot, "%s", inspect.Line(err.Error()))
	}
	return fmt.Errorf("%s", inspect.Line(err.Error()))
}

// source says where the session's records come from, for reports.
func (s *session) source() *inspect.Source {
	if s.snap != nil {
		return s.snap.Info().Source()
	}
	return inspect.ServerSource(s.displayAddress())
}

// noteSnapshot tells stderr what the records were judged against.
func (a *app) noteSnapshot(s *session) {
	if s.snap != nil {
		fmt.Fprintf(a.stderr, "idemctl: reading %s; TTLs and ages as of %s\n", s.snap.Info(), s.snap.Info().At.UTC().Format(time.RFC3339))
	}
}
