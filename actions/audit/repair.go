package audit

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"time"
)

// repairTail makes sure the log ends with a whole line. A last line
// without its newline was torn by an interrupted write (a crash, a full
// disk, an I/O error): it is kept as it is, terminated, and a repair entry
// naming its offset, length and digest follows it, so the next entry can
// never be glued onto it and a reader knows to pass over it. The caller
// holds the file lock.
func repairTail(f *os.File, id Identity, genesis func() Entry) ([]TornLine, error) {
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	size := fi.Size()
	if size == 0 {
		return nil, nil
	}
	var last [1]byte
	if _, err := f.ReadAt(last[:], size-1); err != nil {
		return nil, err
	}
	if last[0] == '\n' {
		return nil, nil
	}
	start, err := lineStart(f, size)
	if err != nil {
		return nil, err
	}
	t, err := describeSpan(f, start, size)
	if err != nil {
		return nil, err
	}
	torn := []TornLine{t}
	whole := start // the end of the last whole line: the repair chains from it
	// A torn repair entry leaves the line it was marking unmarked: mark
	// that one too.
	if start > 0 && isTornRepair(f, start, size) {
		if ps, err := lineStart(f, start-1); err == nil {
			prev := make([]byte, start-1-ps)
			if _, err := f.ReadAt(prev, ps); err == nil && !json.Valid(prev) {
				if pt, err := describeSpan(f, ps, start-1); err == nil {
					torn, whole = []TornLine{pt, t}, ps
				}
			}
		}
	}
	head, err := headBefore(f, whole)
	if err != nil {
		return nil, err
	}
	e := Entry{ID: NewID(), Phase: PhaseRepair, Identity: id, Torn: torn,
		Detail: fmt.Sprintf("the line at byte %d (%d bytes) was left unfinished by an earlier write (a crash, a full disk or an I/O error); kept as it was and terminated", t.Offset, t.Len)}
	lines, _, err := chain(head, genesis, []Entry{e}, time.Now().UTC().Format(time.RFC3339Nano))
	if err != nil {
		return nil, err
	}
	buf := []byte{'\n'}
	for _, l := range lines {
		buf = append(append(buf, l...), '\n')
	}
	if _, err := f.Write(buf); err != nil {
		return nil, err
	}
	if err := f.Sync(); err != nil {
		return nil, err
	}
	return torn, nil
}

// isTornRepair says whether the span is the start of a repair entry.
func isTornRepair(f *os.File, start, end int64) bool {
	n := min(end-start, 256)
	b := make([]byte, n)
	if _, err := f.ReadAt(b, start); err != nil {
		return false
	}
	return bytes.Contains(b, []byte(`"phase":"`+PhaseRepair+`"`))
}

// lineStart finds where the line ending before end begins: just after the
// previous newline, or 0. It reads backwards in chunks, never the whole file.
func lineStart(f *os.File, end int64) (int64, error) {
	const chunk = 64 << 10
	buf := make([]byte, chunk)
	for pos := end; pos > 0; {
		n := min(int64(chunk), pos)
		pos -= n
		if _, err := f.ReadAt(buf[:n], pos); err != nil {
			return 0, err
		}
		if i := bytes.LastIndexByte(buf[:n], '\n'); i >= 0 {
			return pos + int64(i) + 1, nil
		}
	}
	return 0, nil
}

// describeSpan digests the bytes [start, end) of the file.
func describeSpan(f *os.File, start, end int64) (TornLine, error) {
	h := sha256.New()
	if _, err := io.Copy(h, io.NewSectionReader(f, start, end-start)); err != nil {
		return TornLine{}, err
	}
	return TornLine{Offset: start, Len: end - start, SHA256: hex.EncodeToString(h.Sum(nil))}, nil
}
