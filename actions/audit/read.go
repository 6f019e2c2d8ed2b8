package audit

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
)

// maxReadLine bounds one line when reading a log back: far above what the
// writer produces (MaxLine), and above the lines of older versions,
// which wrote values whole.
const maxReadLine = 64 << 20

// Log is an audit log read back.
type Log struct {
	Entries []Entry
	// Torn are lines an interrupted write left unfinished: marked by a
	// repair entry, or the last line still without its newline.
	Torn []TornLine
	// Bad are lines that are neither entries nor marked torn.
	Bad []BadLine
}

// BadLine is a line that is not an entry.
type BadLine struct {
	Line   int
	Offset int64
	Len    int64
	Err    string
}

// Read reads a whole audit log. It never stops at a bad line: every
// entry is returned, and torn and bad lines are listed apart.
func Read(path string) (*Log, error) {
	out := &Log{}
	var err error
	out.Torn, out.Bad, err = Scan(path, nil, func(e Entry) { out.Entries = append(out.Entries, e) })
	return out, err
}

// ReadEntries reads an audit log's entries in order. Torn lines (marked,
// or the unfinished last one) are passed over; a line that is not an entry
// and that no repair names is an error naming its number, returned with
// every entry read.
func ReadEntries(path string) ([]Entry, error) {
	l, err := Read(path)
	if err != nil {
		return nil, err
	}
	if len(l.Bad) > 0 {
		b := l.Bad[0]
		return l.Entries, fmt.Errorf("%s line %d: %s", path, b.Line, b.Err)
	}
	return l.Entries, nil
}

// repairMark finds repair entries without parsing every line.
var repairMark = []byte(`"phase":"` + PhaseRepair + `"`)

// Scan reads the log line by line (no line too long for it up to
// maxReadLine). keep, when set, picks the lines worth parsing by their raw
// bytes (repair entries are always read); fn gets each entry parsed.
func Scan(path string, keep func([]byte) bool, fn func(Entry)) (torn []TornLine, bad []BadLine, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 256<<10)
	s := auditScan{marked: map[int64]bool{}}
	var (
		off  int64
		line []byte
	)
	for n := 1; ; n++ {
		raw, long, rerr := readLine(r, &line)
		if rerr != nil && !errors.Is(rerr, io.EOF) {
			return s.torn, s.bad, fmt.Errorf("%s: %w", path, rerr)
		}
		if len(raw) == 0 && long == 0 && errors.Is(rerr, io.EOF) {
			break
		}
		size := int64(len(raw)) + long // the newline included
		terminated := rerr == nil
		content := bytes.TrimSuffix(raw, []byte{'\n'})
		switch {
		case long > 0:
			s.bad = append(s.bad, BadLine{Line: n, Offset: off, Len: int64(len(content)) + long, Err: fmt.Sprintf("line longer than %d bytes", maxReadLine)})
		case len(bytes.TrimSpace(content)) == 0:
			// an empty line holds nothing
		case keep != nil && !keep(content) && !bytes.Contains(content, repairMark):
		default:
			s.parse(n, off, content, terminated, fn)
		}
		off += size
		if !terminated {
			break
		}
	}
	torn, bad = s.settle()
	return torn, bad, nil
}

// auditScan is what a scan has set apart so far: torn and bad lines, and
// the offsets of the lines repair entries name torn.
type auditScan struct {
	torn   []TornLine
	bad    []BadLine
	marked map[int64]bool
}

// parse reads line n, at off, as an entry and hands it to fn, noting the
// lines it marks torn. A line that is not an entry is bad, unless it is
// the last and unfinished: that one is torn.
func (s *auditScan) parse(n int, off int64, content []byte, terminated bool, fn func(Entry)) {
	var e Entry
	if uerr := json.Unmarshal(content, &e); uerr != nil {
		if !terminated {
			// the last line, still unfinished: a crash or a write in flight
			s.torn = append(s.torn, TornLine{Offset: off, Len: int64(len(content))})
		} else {
			s.bad = append(s.bad, BadLine{Line: n, Offset: off, Len: int64(len(content)), Err: uerr.Error()})
		}
		return
	}
	for _, t := range e.Torn {
		s.marked[t.Offset] = true
	}
	if e.Phase != PhaseGenesis { // the chain's start is no write: Verify reads it
		fn(e)
	}
}

// settle moves the bad lines a repair entry names to the torn ones: a
// repair may come after the line it marks, so this waits for the end.
func (s *auditScan) settle() ([]TornLine, []BadLine) {
	torn := s.torn
	kept := s.bad[:0]
	for _, b := range s.bad {
		if s.marked[b.Offset] {
			torn = append(torn, TornLine{Offset: b.Offset, Len: b.Len})
			continue
		}
		kept = append(kept, b)
	}
	return torn, kept
}

// readLine reads one line into *buf (reused) with its newline, if any. A
// line longer than maxReadLine is skipped: long counts the bytes dropped
// (its newline included).
// The error is io.EOF when the file ended before a newline.
func readLine(r *bufio.Reader, buf *[]byte) (line []byte, long int64, err error) {
	*buf = (*buf)[:0]
	for {
		chunk, err := r.ReadSlice('\n')
		if long > 0 || len(*buf)+len(chunk) > maxReadLine {
			long += int64(len(*buf) + len(chunk))
			*buf = (*buf)[:0]
		} else {
			*buf = append(*buf, chunk...)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return *buf, long, err
	}
}
