package audit

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/idemctl/idemctl/actions/write"
)

// chainedLog writes a real log: two operators (two auditors on one file,
// each its own descriptor and lock) appending at once, then returns its
// lines.
func chainedLog(t *testing.T) (string, []string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "audit.log")
	var wg sync.WaitGroup
	for op := range 2 {
		a, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		a.Origin = "host test, idemctl test"
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer a.Close()
			for i := range 25 {
				key := fmt.Sprintf("op%d-k%d", op, i)
				if err := a.Append(t.Context(), Entry{ID: NewID(), Phase: PhaseIntent, Key: key, Reason: "r"}, Entry{Phase: PhaseOutcome, Key: key, Outcome: write.Applied}); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return path, strings.Split(strings.TrimSuffix(string(raw), "\n"), "\n")
}

// appendIntent appends one intent for key to the log at path, as the
// next write through OpenAudit does.
func appendIntent(t *testing.T, path, key string) {
	t.Helper()
	a, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if err := a.Append(t.Context(), Entry{Phase: PhaseIntent, Key: key}); err != nil {
		t.Fatal(err)
	}
}

func writeLines(t *testing.T, lines []string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "tampered.log")
	if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func offsetOf(lines []string, n int) int64 {
	var off int64
	for _, l := range lines[:n-1] {
		off += int64(len(l)) + 1
	}
	return off
}

// Two operators appending at once keep one valid chain: a genesis, then
// 100 entries numbered 1 to 100, each chained to the line before.
func TestAuditChainConcurrentAppenders(t *testing.T) {
	path, lines := chainedLog(t)
	rep, err := Verify(path, nil)
	if err != nil || rep.Break != nil || rep.Entries != 101 || rep.Lines != 101 || rep.ChainStart != 1 || rep.Unchained != 0 {
		t.Fatalf("%+v %+v %v", rep, rep.Break, err)
	}
	head, err := ReadHead(path)
	if err != nil || head != rep.Head || !strings.HasPrefix(head, "100:") {
		t.Fatalf("head %q, verify says %q (%v)", head, rep.Head, err)
	}
	pin, _ := ParseHead(head)
	if rep, _ := Verify(path, &pin); rep.Break != nil {
		t.Fatalf("its own head: %+v", rep.Break)
	}
	if !strings.Contains(lines[0], `"phase":"genesis"`) || !strings.Contains(lines[0], `"origin":"host test, idemctl test"`) {
		t.Fatalf("genesis: %s", lines[0])
	}
}

// Each way of tampering is caught at the line where it was done.
func TestAuditChainCatchesTampering(t *testing.T) {
	_, lines := chainedLog(t)
	edited := func(i int) []string {
		out := append([]string(nil), lines...)
		for _, r := range [][2]string{{`"reason":"r"`, `"reason":"R"`}, {`"outcome":"applied"`, `"outcome":"conflict"`}, {`idemctl test`, `idemctl TEST`}} {
			if o := strings.Replace(out[i-1], r[0], r[1], 1); o != out[i-1] {
				out[i-1] = o
				break
			}
		}
		if out[i-1] == lines[i-1] {
			t.Fatalf("line %d has no reason to edit: %s", i, lines[i-1])
		}
		return out
	}
	without := func(i int) []string { return append(append([]string(nil), lines[:i-1]...), lines[i:]...) }
	swapped := func(i int) []string {
		out := append([]string(nil), lines...)
		out[i-1], out[i] = out[i], out[i-1]
		return out
	}
	inserted := func(at int, line string) []string {
		return append(append(append([]string(nil), lines[:at-1]...), line), lines[at-1:]...)
	}
	for _, c := range []struct {
		name  string
		lines []string
		line  int
		what  string
	}{
		{"edited", edited(10), 10, "was edited"},
		{"removed", without(10), 10, "entry 9 is missing here"},
		{"swapped", swapped(10), 10, "entry 10, but 9 was expected"},
		{"a copy inserted", inserted(20, lines[4]), 20, "is entry 4 after entry 18"},
		{"a line inserted", inserted(20, `{"time":"2026-01-01T00:00:00Z","phase":"intent","key":"forged"}`), 20, "has no chain fields"},
		{"garbage inserted", inserted(20, "not json"), 20, "is not an audit entry"},
		{"the start removed", lines[3:], 1, "entries before it were removed"},
		{"the genesis edited", edited(1), 1, "was edited"},
	} {
		t.Run(c.name, func(t *testing.T) {
			rep, err := Verify(writeLines(t, c.lines), nil)
			if err != nil || rep.Break == nil {
				t.Fatalf("not caught: %+v %v", rep, err)
			}
			if b := rep.Break; b.Line != c.line || b.Offset != offsetOf(c.lines, c.line) || !strings.Contains(b.What, c.what) {
				t.Fatalf("caught at line %d (byte %d): %s; want line %d (byte %d): %s", b.Line, b.Offset, b.What, c.line, offsetOf(c.lines, c.line), c.what)
			}
		})
	}
	// The last line edited, or the end cut: only a head printed earlier
	// can tell. Without one the chain is whole; with it, caught.
	head, _ := ParseHead(func() string { r, _ := Verify(writeLines(t, lines), nil); return r.Head }())
	for name, ls := range map[string][]string{"the last line edited": edited(len(lines)), "the end cut": lines[:len(lines)-3]} {
		p := writeLines(t, ls)
		if rep, _ := Verify(p, nil); rep.Break != nil {
			t.Fatalf("%s, no head: %+v", name, rep.Break)
		}
		if rep, _ := Verify(p, &head); rep.Break == nil {
			t.Fatalf("%s: the printed head did not catch it", name)
		}
	}
}

// An unfinished last line is an interrupted write, not tampering; the
// next write's repair keeps the chain whole (it chains from the last
// whole line, and the torn line it names stays outside the chain).
func TestAuditChainTornTail(t *testing.T) {
	path, _ := chainedLog(t)
	appendRaw(t, path, `{"seq":101,"prev":"ab","time":"2026`)
	rep, err := Verify(path, nil)
	if err != nil || rep.Break != nil || rep.Truncated == nil {
		t.Fatalf("torn tail: %+v %v", rep, err)
	}
	appendIntent(t, path, "after")
	rep, err = Verify(path, nil)
	if err != nil || rep.Break != nil || rep.Truncated != nil || rep.Entries != 103 || !strings.HasPrefix(rep.Head, "102:") {
		t.Fatalf("after the repair: %+v %+v %v", rep, rep.Break, err)
	}
}

// A log an older idemctl wrote without a chain: read, and the chain
// starts with a genesis chained to its last line.
func TestAuditChainAfterUnchainedLines(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.log")
	old := []string{`{"time":"2026-01-01T00:00:00Z","id":"a","phase":"intent","key":"k"}`, `{"time":"2026-01-01T00:00:01Z","id":"a","phase":"outcome","key":"k","outcome":"applied"}`}
	if err := os.WriteFile(path, []byte(strings.Join(old, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	appendIntent(t, path, "new")
	rep, err := Verify(path, nil)
	if err != nil || rep.Break != nil || rep.Unchained != 2 || rep.ChainStart != 3 || rep.Entries != 2 {
		t.Fatalf("%+v %+v %v", rep, rep.Break, err)
	}
	raw, _ := os.ReadFile(path)
	lines := strings.Split(strings.TrimSuffix(string(raw), "\n"), "\n")
	lines[1] = strings.Replace(lines[1], `"applied"`, `"conflict"`, 1)
	if rep, _ := Verify(writeLines(t, lines), nil); rep.Break == nil || rep.Break.Line != 2 {
		t.Fatalf("the last unchained line edited: %+v", rep.Break)
	}
}
