// Package safefile reads the small files idemctl is pointed at (config,
// password, CA certificates) with a size cap, and only when they are
// regular files: a FIFO, a device such as /dev/zero or a directory is
// refused before a byte is read, so a bad path can neither hang the
// command (a FIFO's open waits for a writer, deaf to SIGTERM) nor exhaust
// memory.
//
// Floor 0 of ARCHITECTURE.md, a foundation: it imports no idemctl package
// but other foundations.
package safefile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"

	"github.com/idemctl/idemctl/internal/units"
)

// Size caps for the files idemctl reads.
const (
	MaxConfig   = 1 << 20
	MaxPassword = 64 << 10
	MaxPEM      = 1 << 20
)

// Read returns the contents of the regular file at path, refusing one
// larger than limit bytes. Errors name the path and say what is wrong in
// one line; a missing file wraps fs.ErrNotExist.
func Read(path string, limit int64) ([]byte, error) {
	// O_NONBLOCK: opening a FIFO returns at once instead of waiting for a
	// writer; it is refused below. A regular file ignores the flag.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			return nil, fmt.Errorf("%s: %w", path, pe.Err)
		}
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is %s, not a regular file", path, kind(st.Mode()))
	}
	if st.Size() > limit {
		return nil, fmt.Errorf("%s is %s, more than the %s allowed", path, units.FormatBytes(st.Size()), units.FormatBytes(limit))
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if int64(len(data)) > limit { // it grew while read
		return nil, fmt.Errorf("%s is more than the %s allowed", path, units.FormatBytes(limit))
	}
	return data, nil
}

func kind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO (named pipe)"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	}
	return "not a plain file"
}
