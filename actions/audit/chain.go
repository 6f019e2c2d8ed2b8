package audit

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
)

// The audit log is a hash chain: every entry carries Seq, one more than
// the entry before it, and Prev, the SHA-256 of that entry's line (its
// bytes, without the newline). Editing, removing, reordering or inserting
// a line breaks the chain at the line after it, which Verify names.
// A chain begins with a genesis entry: at the top of a new log, or after
// the last line of a log an older idemctl wrote without a chain.
const PhaseGenesis = "genesis"

// chainHead is where the chain stands: the last chained entry's sequence
// number and line digest.
type chainHead struct {
	seq    uint64
	digest string
	ok     bool // a chained entry was found; else the next append starts a chain
}

// String is the head as `audit verify --head` takes it: SEQ:DIGEST.
func (h chainHead) String() string { return fmt.Sprintf("%d:%s", h.seq, h.digest) }

func lineDigest(line []byte) string {
	sum := sha256.Sum256(line)
	return hex.EncodeToString(sum[:])
}

// chainFields is what the chain needs of a line, read without the rest.
type chainFields struct {
	Seq   *uint64    `json:"seq"`
	Prev  string     `json:"prev"`
	Phase string     `json:"phase"`
	Torn  []TornLine `json:"torn"`
	ID    string     `json:"id"`
}

// headBefore reads the chain's head from the last whole entry ending
// before end (the file's length, or a torn line's start). A log whose last
// entry is unchained (or an empty log) gives a head that is not ok, with
// the digest of that last line for the genesis to chain from.
func headBefore(f *os.File, end int64) (chainHead, error) {
	for end > 0 {
		start, err := lineStart(f, end-1)
		if err != nil {
			return chainHead{}, err
		}
		line := make([]byte, end-1-start)
		if _, err := f.ReadAt(line, start); err != nil {
			return chainHead{}, err
		}
		if len(line) == 0 { // an empty line: the one before it
			end = start
			continue
		}
		var c chainFields
		if json.Unmarshal(line, &c) != nil || c.Seq == nil {
			return chainHead{digest: lineDigest(line)}, nil
		}
		return chainHead{seq: *c.Seq, digest: lineDigest(line), ok: true}, nil
	}
	return chainHead{}, nil
}

// chain gives each entry its place after h, marshalled, and returns the
// lines and the new head. When h is not ok a genesis entry comes first.
func chain(h chainHead, genesis func() Entry, es []Entry, now string) ([][]byte, chainHead, error) {
	var lines [][]byte
	next := func(e Entry) error {
		seq, prev := h.seq+1, h.digest
		if !h.ok {
			seq = 0
		}
		e.Seq, e.Prev = &seq, prev
		line, err := marshalEntry(e, now)
		if err != nil {
			return err
		}
		lines = append(lines, line)
		h = chainHead{seq: seq, digest: lineDigest(line), ok: true}
		return nil
	}
	if !h.ok {
		if err := next(genesis()); err != nil {
			return nil, h, err
		}
	}
	for _, e := range es {
		if err := next(e); err != nil {
			return nil, h, err
		}
	}
	return lines, h, nil
}
