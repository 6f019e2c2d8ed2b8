package inspect

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/idemctl/idemctl/inspect/rdb"
)

// SnapshotSource is a snapshot (RDB) file a scan reads instead of a
// server (Options.Snapshot): its keys go through the same decode and
// classify as a live scan's, judged at the snapshot's own time.
type SnapshotSource struct {
	spec  SnapshotSpec
	atMs  int64
	size  int64 // bytes, for progress; 0 when unknown (a pipe)
	mu    sync.Mutex
	info  SnapshotInfo
	rc    io.ReadCloser
	r     *rdb.Reader
	first *rdb.Entry // the first key, read with the header
	used  bool       // standard input is read once
}

// SnapshotSpec says which file, which database, and at what time.
type SnapshotSpec struct {
	Path  string    // "-": Stdin
	Stdin io.Reader // standard input, for "-"
	DB    int
	// At is the time the records are judged at; zero: the snapshot's own
	// (its ctime field), and a snapshot without one is refused.
	At time.Time
	// Versions hashes every value, for Options.Versions.
	Versions bool
}

// SnapshotInfo is what a snapshot says of itself, and what reading it
// found.
type SnapshotInfo struct {
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

// SnapshotError is a snapshot that cannot be read (or read on): the file,
// and (wrapped) the fault, a *rdb.FormatError naming the byte offset.
type SnapshotError struct {
	Name string
	Err  error
}

func (e *SnapshotError) Error() string { return "snapshot " + e.Name + ": " + e.Err.Error() }
func (e *SnapshotError) Unwrap() error { return e.Err }

// OpenSnapshot opens the file and reads its header up to the first key,
// so the caller knows what it holds and when it was taken before a scan.
func OpenSnapshot(spec SnapshotSpec) (*SnapshotSource, error) {
	s := &SnapshotSource{spec: spec, info: SnapshotInfo{Name: spec.Path, DB: spec.DB}}
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
		return nil, &SnapshotError{Name: spec.Path, Err: errors.New("it does not say when it was taken (no ctime field): give the time its TTLs count from with --at (e.g. --at 2026-12-05T14:00:00Z)")}
	}
	s.atMs = s.info.At.UnixMilli()
	return s, nil
}

// open (re)opens the file and reads to its first key.
func (s *SnapshotSource) open() error {
	if s.spec.Path == "-" {
		if s.used {
			return &SnapshotError{Name: "-", Err: errors.New("standard input can be read only once")}
		}
		s.used = true
		s.rc = io.NopCloser(s.spec.Stdin)
	} else {
		f, err := os.Open(s.spec.Path)
		if err != nil {
			return &SnapshotError{Name: s.spec.Path, Err: errors.Unwrap(err)}
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
		return &SnapshotError{Name: s.spec.Path, Err: err}
	}
	s.r = r
	return nil
}

// Info is what the snapshot says of itself; after a scan, what it found.
func (s *SnapshotSource) Info() SnapshotInfo {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.info
}

// Reopenable reports whether the file can be read again (not a pipe).
func (s *SnapshotSource) Reopenable() bool { return s.spec.Path != "-" }

// Close closes the file.
func (s *SnapshotSource) Close() error {
	if s.rc == nil {
		return nil
	}
	err := s.rc.Close()
	s.rc, s.r = nil, nil
	return err
}

// reader hands out the open reader, reopening the file when a scan read
// it already.
func (s *SnapshotSource) reader() (*rdb.Reader, *rdb.Entry, error) {
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
func (s *SnapshotSource) finish(r *rdb.Reader, dbKeys int64) {
	st := r.Stats()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.info.Checksum, s.info.Bytes, s.info.Keys, s.info.DBKeys, s.info.LongKeys = st.Checksum.String(), st.BytesRead, st.Keys, dbKeys, st.LongKeys
}

// String is the source in one line, for headers and notes.
func (i SnapshotInfo) String() string {
	s := "snapshot " + Sanitize(i.Name)
	if i.Server != "" {
		s += " (" + Sanitize(i.Server) + ", RDB " + fmt.Sprint(i.Version) + ")"
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
