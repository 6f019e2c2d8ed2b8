package actions

import (
	"encoding/base64"
	"fmt"
	"strings"
)

// The --from-file format: one target a line, KEY[<TAB>STATE<TAB>FINGERPRINT
// [<TAB>VERSION]]; blank lines and lines starting with # are skipped. A
// line "#b64<TAB>…" carries the same columns, each in standard base64: any
// key (NUL aside) and any stored state or fingerprint then survives a
// terminal, a copy and paste, and a shell here-document, and can never end
// one early or run anything.
const b64Prefix = "#b64\t"

// TargetLine formats one --from-file line: plain and readable when every
// column is, base64 otherwise.
func TargetLine(cols ...string) string {
	plain := true
	for i, c := range cols {
		plain = plain && plainColumn(c, i == 0)
	}
	if plain {
		return strings.Join(cols, "\t")
	}
	enc := make([]string, len(cols))
	for i, c := range cols {
		enc[i] = base64.StdEncoding.EncodeToString([]byte(c))
	}
	return b64Prefix + strings.Join(enc, "\t")
}

// plainColumn reports whether s reads back unchanged from a plain line:
// printable ASCII, no TAB, no space at either end (a terminal copy drops
// trailing ones), and a key that neither starts a comment nor reads as a
// here-document's end.
func plainColumn(s string, key bool) bool {
	if key && (s == "" || s[0] == '#' || s == "EOF") {
		return false
	}
	if s != strings.TrimSpace(s) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

// TargetColumns splits one --from-file line into its columns, decoding a
// base64 line; nil for a blank line or a comment.
func TargetColumns(line string) ([]string, error) {
	line = strings.TrimRight(line, "\r")
	if rest, ok := strings.CutPrefix(line, b64Prefix); ok {
		cols := strings.Split(strings.TrimSpace(rest), "\t")
		for i, c := range cols {
			b, err := base64.StdEncoding.DecodeString(c)
			if err != nil {
				return nil, fmt.Errorf("column %d is not base64", i+1)
			}
			if i == 0 && len(b) == 0 {
				return nil, fmt.Errorf("the key is empty")
			}
			cols[i] = string(b)
		}
		return cols, nil
	}
	if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
		return nil, nil
	}
	return strings.Split(line, "\t"), nil
}
