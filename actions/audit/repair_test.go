package audit

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/idemctl/idemctl/actions/write"
)

// A torn last line (a crash or a full disk mid-write) is kept, terminated
// and marked by the next append, never glued to the next entry; the reader
// passes over it and reads every entry.
func TestAuditTornTailRepaired(t *testing.T) {
	ctx := t.Context()
	path := auditPath(t)
	a, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Write(ctx, Entry{Phase: PhaseIntent, Key: "k1"}); err != nil {
		t.Fatal(err)
	}
	a.Close()
	frag := `{"time":"2026-01-01T00:00:00Z","id":"torn","phase":"intent","key":"k2","reaso`
	appendRaw(t, path, frag)
	if _, err := ReadEntries(path); err != nil {
		t.Fatalf("an unfinished last line is a torn tail, not an error: %v", err)
	}

	a, err = Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Append(ctx, Entry{Phase: PhaseIntent, Key: "k3"}, Entry{Phase: PhaseOutcome, Key: "k3"}); err != nil {
		t.Fatal(err)
	}
	torn := a.Repaired()
	a.Close()
	raw, _ := os.ReadFile(path)
	lines := strings.Split(strings.TrimSuffix(string(raw), "\n"), "\n")
	// the chain's genesis, k1, the torn line, the repair, k3 twice
	if len(lines) != 6 || !strings.Contains(lines[0], `"phase":"genesis"`) || lines[2] != frag || !strings.Contains(lines[3], `"phase":"repair"`) || !strings.Contains(lines[4], `"key":"k3"`) {
		t.Fatalf("log after repair:\n%s", raw)
	}
	if len(torn) != 1 || torn[0].Offset != int64(len(lines[0])+len(lines[1])+2) || torn[0].Len != int64(len(frag)) || torn[0].SHA256 == "" {
		t.Fatalf("reported torn lines %+v", torn)
	}
	l, err := Read(path)
	if err != nil || len(l.Entries) != 4 || len(l.Bad) != 0 || len(l.Torn) != 1 || l.Torn[0].Offset != torn[0].Offset {
		t.Fatalf("read back: %d entries, torn %+v, bad %+v, %v\n%s", len(l.Entries), l.Torn, l.Bad, err, raw)
	}
	if es, err := ReadEntries(path); err != nil || len(es) != 4 {
		t.Fatalf("ReadAuditLog: %d entries, %v", len(es), err)
	}

	// The repair itself torn (the disk still full): the next repair marks
	// both the first fragment and the torn repair line.
	path2 := auditPath(t)
	appendRaw(t, path2, frag+"\n"+`{"time":"2026-01-01T00:00:01Z","id":"r1","phase":"repair","det`)
	a, err = Open(path2)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Write(ctx, Entry{Phase: PhaseIntent, Key: "k4"}); err != nil {
		t.Fatal(err)
	}
	a.Close()
	if l, err := Read(path2); err != nil || len(l.Bad) != 0 || len(l.Torn) != 2 || len(l.Entries) != 2 {
		t.Fatalf("torn repair: %d entries, torn %+v, bad %+v, %v", len(l.Entries), l.Torn, l.Bad, err)
	}
}

func appendRaw(t *testing.T, path, s string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
}

// The reader takes lines of any size an older writer produced (values
// whole, several megabytes) where bufio.Scanner answered "token too long".
func TestAuditReaderLongLines(t *testing.T) {
	path := auditPath(t)
	big := strings.Repeat(`\u003c`, 600_000) // 3.6 MB of JSON-escaped '<'
	appendRaw(t, path, `{"phase":"intent","id":"a","key":"k","before":{"exists":true,"ttl_ms":1,"fields":{"response":"`+big+`"}}}`+"\n")
	appendRaw(t, path, `{"phase":"outcome","id":"a","key":"k","outcome":"applied"}`+"\n")
	es, err := ReadEntries(path)
	if err != nil || len(es) != 2 || len(es[0].Before.Fields["response"]) != 600_000 || es[1].Outcome != write.Applied {
		t.Fatalf("read %d entries, %v", len(es), err)
	}
}

func auditPath(t testing.TB) string { return filepath.Join(t.TempDir(), "audit.log") }
