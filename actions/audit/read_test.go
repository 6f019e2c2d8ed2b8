package audit

import (
	"os"
	"strings"
	"testing"
)

func TestReadAuditLog(t *testing.T) {
	path := auditPath(t)
	a, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, phase := range []string{"intent", "outcome"} {
		if err := a.Write(t.Context(), Entry{Phase: phase, Key: "k", Reason: strings.Repeat("r", 100<<10)}); err != nil {
			t.Fatal(err)
		}
	}
	a.Close()
	got, err := ReadEntries(path)
	if err != nil || len(got) != 2 || got[0].Phase != "intent" || got[1].Phase != "outcome" || got[1].Key != "k" {
		t.Fatalf("read %+v, %v", got, err)
	}
	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString("not json\n")
	f.Close()
	// line 1 is the chain's genesis, which is no write
	if got, err := ReadEntries(path); err == nil || !strings.Contains(err.Error(), "line 4") || len(got) != 2 {
		t.Fatalf("bad line: %d entries, %v", len(got), err)
	}
}
