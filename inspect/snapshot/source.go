// Package snapshot reads a Redis snapshot (RDB) file in place of a
// server: its keys matched against the keyspaces, their values read once
// by inspect/rdb and classified by inspect as a live scan's are, at the
// snapshot's own time; companion locks found by a first pass, records'
// versions computed as the version script computes them, and detect's
// sample.
//
// Floor 1 of ARCHITECTURE.md, the read engine: it plugs into inspect as a
// key source (inspect.KeySource) and may import inspect, inspect/rdb and
// the foundations.
package snapshot

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/inspect/rdb"
)

// Source is a snapshot (RDB) file a scan reads instead of a
// server (Options.Snapshot): its keys go through the same decode and
// classify as a live scan's, judged at the snapshot's own time.
type Source struct {
	spec  Spec
	atMs  int64
	size  int64 // bytes, for progress; 0 when unknown (a pipe)
	mu    sync.Mutex
	info  Info
	rc    io.ReadCloser
	r     *rdb.Reader
	first *rdb.Entry // the first key, read with the header
	used  bool       // standard input is read once
}

// Spec says which file, which database, and at what time.
type Spec struct {
	Path  string    // "-": Stdin
	Stdin io.Reader // standard input, for "-"
	DB    int
	// At is the time the records are judged at; zero: the snapshot's own
	// (its ctime field), and a snapshot without one is refused.
	At time.Time
	// Versions hashes every value, for Options.Versions.
	Versions bool
}

// Info is what a snapshot says of itself, and what reading it
// found.
type Info struct {
	Name    string // the file's path, or "-" for standard input
	Version int    // RDB version
	Server  string // the server that wrote it ("Redis 7.0.15"), when it says
	Taken   time.Time
	At      time.Time // the time TTLs, ages and staleness are computed at
	AtFrom  string    // "snapshot" (its ctime) or "--at"
	DB      int
	// Set once the file was read to its end:
	Checksum string // verified, disabled (rdbchecksum no) or none
	Bytes    int64
	Keys     int64 // every key in the file, all databases
	DBKeys   int64 // the keys of database DB
	LongKeys int64 // keys over the reader's key cap, skipped
}

// Error is a snapshot that cannot be read (or read on): the file,
// and (wrapped) the fault, a *rdb.FormatError naming the byte offset.
type Error struct {
	Name string
	Err  error
}

func (e *Error) Error() string { return "snapshot " + e.Name + ": " + e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// Open opens the file and reads its header up to the first key,
// so the caller knows what it holds and when it was taken before a scan.
func Open(spec Spec) (*Source, error) {
	s := &Source{spec: spec, info: Info{Name: spec.Path, DB: spec.DB}}
	if spec.Path == "" {
		return nil, errors.New("no snapshot file named")
	}
	if err := s.open(); err != nil {
		return nil, err
	}
	h := s.r.Header()
	s.info.Version, s.info.Server, s.info.Taken = h.Version, h.Server(), h.CTime
	switch {
	case !spec.At.IsZero():
		s.info.At, s.info.AtFrom = spec.At, "--at"
	case !h.CTime.IsZero():
		s.info.At, s.info.AtFrom = h.CTime, "snapshot"
	default:
		s.Close()
		return nil, &Error{Name: spec.Path, Err: errors.New("it does not say when it was taken (no ctime field): give the time its TTLs count from with --at (e.g. --at 2026-12-05T14:00:00Z)")}
	}
	s.atMs = s.info.At.UnixMilli()
	return s, nil
}

// open (re)opens the file and reads to its first key.
func (s *Source) open() error {
	if s.spec.Path == "-" {
		if s.used {
			return &Error{Name: "-", Err: errors.New("standard input can be read only once")}
		}
		s.used = true
		s.rc = io.NopCloser(s.spec.Stdin)
	} else {
		f, err := os.Open(s.spec.Path)
		if err != nil {
			return &Error{Name: s.spec.Path, Err: errors.Unwrap(err)}
		}
		if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
			s.size = fi.Size()
		}
		s.rc = f
	}
	r, err := rdb.NewReader(s.rc, rdb.Options{Digest: s.spec.Versions})
	if err == nil {
		s.first, err = r.Next()
		if errors.Is(err, io.EOF) {
			err = nil
		}
	}
	if err != nil {
		s.rc.Close()
		return &Error{Name: s.spec.Path, Err: err}
	}
	s.r = r
	return nil
}

// Info is what the snapshot says of itself; after a scan, what it found.
func (s *Source) Info() Info {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.info
}

// Reopenable reports whether the file can be read again (not a pipe).
func (s *Source) Reopenable() bool { return s.spec.Path != "-" }

// Close closes the file.
func (s *Source) Close() error {
	if s.rc == nil {
		return nil
	}
	err := s.rc.Close()
	s.rc, s.r = nil, nil
	return err
}

// reader hands out the open reader, reopening the file when a scan read
// it already.
func (s *Source) reader() (*rdb.Reader, *rdb.Entry, error) {
	if s.r == nil {
		if err := s.open(); err != nil {
			return nil, nil, err
		}
	}
	r, first := s.r, s.first
	s.r, s.first = nil, nil // the next pass opens it anew
	return r, first, nil
}

// finish records what reading to the end found.
func (s *Source) finish(r *rdb.Reader, dbKeys int64) {
	st := r.Stats()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.info.Checksum, s.info.Bytes, s.info.Keys, s.info.DBKeys, s.info.LongKeys = st.Checksum.String(), st.BytesRead, st.Keys, dbKeys, st.LongKeys
}

// String is the source in one line, for headers and notes.
func (i Info) String() string {
	s := "snapshot " + inspect.Sanitize(i.Name)
	if i.Server != "" {
		s += " (" + inspect.Sanitize(i.Server) + ", RDB " + fmt.Sprint(i.Version) + ")"
	} else {
		s += fmt.Sprintf(" (RDB %d)", i.Version)
	}
	if !i.Taken.IsZero() {
		s += " taken " + i.Taken.UTC().Format(time.RFC3339)
	}
	if i.AtFrom == "--at" {
		s += ", judged at " + i.At.UTC().Format(time.RFC3339) + " (--at)"
	}
	return s
}

// Source is the snapshot's, for reports.
func (i Info) Source() *inspect.Source {
	s := &inspect.Source{Kind: "snapshot", File: i.Name, Server: i.Server, RDBVersion: i.Version, DB: &i.DB, Clock: i.AtFrom, Checksum: i.Checksum}
	at := i.At.UTC()
	s.At = &at
	if !i.Taken.IsZero() {
		t := i.Taken.UTC()
		s.Taken = &t
	}
	return s
}

// String names the file for a report (inspect.KeySource): Info's String.
func (s *Source) String() string { return s.Info().String() }

// ScanKeyspaces is inspect.ScanAll over the file (inspect.KeySource).
func (s *Source) ScanKeyspaces(ctx context.Context, kss []*inspect.Keyspace, opt inspect.Options, out chan<- inspect.Batch) []inspect.Coverage {
	return scanSnapshot(ctx, s, kss, opt, out)
}
