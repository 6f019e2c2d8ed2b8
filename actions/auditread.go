package actions

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
)

// maxAuditLine bounds one audit line when reading a log back (entries carry
// before/after values, each capped well below this).
const maxAuditLine = 1 << 20

// ReadAuditLog reads an audit log written by an Auditor, one entry a line,
// in order. A line that is not an entry is an error naming its number.
func ReadAuditLog(path string) ([]AuditEntry, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []AuditEntry
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), maxAuditLine)
	for n := 1; sc.Scan(); n++ {
		var e AuditEntry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			return out, fmt.Errorf("%s line %d: %w", path, n, err)
		}
		out = append(out, e)
	}
	if err := sc.Err(); err != nil {
		return out, fmt.Errorf("%s: %w", path, err)
	}
	return out, nil
}
