package audit

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
)

// ChainReport is what Verify found walking a log's hash chain.
type ChainReport struct {
	Lines   int `json:"lines"`
	Entries int `json:"entries"` // chained entries
	// Unchained counts the lines before the chain (an older idemctl wrote
	// them without one): they are read, but cannot be verified.
	Unchained  int    `json:"unchained"`
	ChainStart int    `json:"chain_start,omitempty"` // the genesis entry's line
	Head       string `json:"head,omitempty"`        // SEQ:DIGEST of the last entry
	// Truncated is an unfinished last line: a write was interrupted (a
	// crash, a full disk), not tampering; the next write repairs it.
	Truncated *TornLine `json:"truncated,omitempty"`
	// Break is the first place the chain does not hold; nil when whole.
	Break *ChainBreak `json:"break,omitempty"`
}

// ChainBreak is where, and how, a chain was broken.
type ChainBreak struct {
	Line   int    `json:"line"`
	Offset int64  `json:"offset"`
	What   string `json:"what"`
}

// HeadPin is a head printed earlier (SEQ:DIGEST): the entry with that
// sequence number must still be exactly that line.
type HeadPin struct {
	Seq    uint64
	Digest string
}

// ParseHead reads SEQ:DIGEST.
func ParseHead(s string) (HeadPin, error) {
	seq, dig, ok := strings.Cut(s, ":")
	n, err := strconv.ParseUint(seq, 10, 64)
	if !ok || err != nil || len(dig) != 64 {
		return HeadPin{}, errors.New("want SEQ:DIGEST, as a write run or 'idemctl audit show' prints it (a number, a colon, 64 hex digits)")
	}
	return HeadPin{Seq: n, Digest: strings.ToLower(dig)}, nil
}

// chainWalk is Verify's state between lines.
type chainWalk struct {
	rep      ChainReport
	pin      *HeadPin
	pinSeen  bool
	started  bool
	prevSeq  uint64
	prevDig  string // the digest of the last line the chain counts
	prevLine int
	prevOff  int64
	pending  *ChainBreak // a line that is no entry, unless a repair names it torn
}

// Verify walks the log's chain and reports the first entry that was
// edited, removed, reordered or inserted, with its line and byte offset.
// With pin, the entry pin names must still be the line whose digest was
// printed, which also catches an edit of the last lines or a rewrite of
// the whole chain from the start.
func Verify(path string, pin *HeadPin) (*ChainReport, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	w := &chainWalk{pin: pin}
	r := bufio.NewReaderSize(f, 256<<10)
	var (
		off int64
		buf []byte
	)
	for n := 1; w.rep.Break == nil; n++ {
		raw, long, rerr := readLine(r, &buf)
		if rerr != nil && !errors.Is(rerr, io.EOF) {
			return nil, fmt.Errorf("%s: %w", path, rerr)
		}
		if len(raw) == 0 && long == 0 {
			break
		}
		content := bytes.TrimSuffix(raw, []byte{'\n'})
		w.rep.Lines = n
		if long > 0 {
			w.fail(n, off, fmt.Sprintf("is longer than %d bytes: not an entry idemctl wrote", maxReadLine))
		} else {
			w.line(n, off, content, rerr == nil)
		}
		off += int64(len(raw)) + long
		if rerr != nil {
			break
		}
	}
	w.finish()
	return &w.rep, nil
}

func (w *chainWalk) fail(line int, off int64, what string) {
	if w.rep.Break == nil {
		w.rep.Break = &ChainBreak{Line: line, Offset: off, What: what}
	}
}

// line checks one line against the chain so far.
func (w *chainWalk) line(n int, off int64, content []byte, terminated bool) {
	if len(bytes.TrimSpace(content)) == 0 {
		return
	}
	var c chainFields
	if json.Unmarshal(content, &c) != nil {
		switch {
		case !terminated:
			w.rep.Truncated = &TornLine{Offset: off, Len: int64(len(content))}
		case w.pending != nil:
			w.rep.Break = w.pending
		default:
			w.pending = &ChainBreak{Line: n, Offset: off, What: "is not an audit entry (edited, or written around idemctl)"}
		}
		return
	}
	if p := w.pending; p != nil {
		if c.Phase != PhaseRepair || !slices.ContainsFunc(c.Torn, func(t TornLine) bool { return t.Offset == p.Offset }) {
			w.rep.Break = p
			return
		}
		w.pending = nil // a torn line its repair names: outside the chain
	}
	dig := lineDigest(content)
	switch {
	case c.Seq == nil && w.started:
		w.fail(n, off, "has no chain fields (seq, prev): inserted, or written around idemctl")
	case c.Seq == nil:
		w.rep.Unchained++
	case !w.started:
		w.begin(n, off, c)
	default:
		w.next(n, off, c)
	}
	if w.rep.Break != nil {
		return
	}
	if c.Seq != nil {
		w.rep.Entries++
		w.prevSeq = *c.Seq
		w.rep.Head = chainHead{seq: *c.Seq, digest: dig, ok: true}.String()
		if w.pin != nil && *c.Seq == w.pin.Seq {
			w.pinSeen = true
			if dig != w.pin.Digest {
				w.fail(n, off, fmt.Sprintf("is not the entry %d:%s… printed earlier: the log was rewritten up to it", w.pin.Seq, w.pin.Digest[:12]))
			}
		}
	}
	w.prevDig, w.prevLine, w.prevOff = dig, n, off
}

// begin checks the chain's first entry: a genesis, chained to the line
// before it (the last unchained one), or to nothing in a new log.
func (w *chainWalk) begin(n int, off int64, c chainFields) {
	w.started, w.rep.ChainStart = true, n
	switch {
	case c.Phase != PhaseGenesis || *c.Seq != 0:
		w.fail(n, off, fmt.Sprintf("is entry %d, but the chain starts with its genesis entry (seq 0): the entries before it were removed", *c.Seq))
	case c.Prev != w.prevDig && w.prevLine > 0:
		w.fail(w.prevLine, w.prevOff, "was edited: its digest is not the one the chain's genesis (line "+strconv.Itoa(n)+") records")
	case c.Prev != w.prevDig:
		w.fail(n, off, "starts the chain after lines that are no longer there: the log's beginning was removed")
	}
}

// next checks an entry after the first: one more than the last, chained
// to its line.
func (w *chainWalk) next(n int, off int64, c chainFields) {
	want := w.prevSeq + 1
	switch {
	case *c.Seq == want && c.Prev == w.prevDig:
	case *c.Seq == want:
		w.fail(w.prevLine, w.prevOff, fmt.Sprintf("(entry %d) was edited: its digest is not the one line %d records", w.prevSeq, n))
	case *c.Seq > want:
		w.fail(n, off, fmt.Sprintf("is entry %d, but %d was expected: %s missing here (removed, or moved later)", *c.Seq, want, entriesText(want, *c.Seq-1)))
	default:
		w.fail(n, off, fmt.Sprintf("is entry %d after entry %d: moved (reordered) or inserted", *c.Seq, w.prevSeq))
	}
}

func entriesText(from, to uint64) string {
	if from == to {
		return fmt.Sprintf("entry %d is", from)
	}
	return fmt.Sprintf("entries %d to %d are", from, to)
}

// finish reports what only the end tells: a bad last line, a printed head
// the log no longer reaches.
func (w *chainWalk) finish() {
	if w.pending != nil {
		w.fail(w.pending.Line, w.pending.Offset, w.pending.What)
	}
	if w.rep.Break == nil && w.pin != nil && !w.pinSeen {
		what := fmt.Sprintf("ends at entry %d, before the head %d printed earlier: entries were removed from its end", w.prevSeq, w.pin.Seq)
		if !w.started {
			what = fmt.Sprintf("has no chain, yet head %d was printed from it: the log was replaced", w.pin.Seq)
		}
		w.fail(w.rep.Lines, 0, what)
	}
}

// ReadHead is the log's chain head now (SEQ:DIGEST), "" when it has no
// chain yet.
func ReadHead(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", err
	}
	h, err := headBefore(f, fi.Size())
	if err != nil || !h.ok {
		return "", err
	}
	return h.String(), nil
}
