package write

import (
	"crypto/sha1"
	"encoding/hex"
	"strings"

	"github.com/idemctl/idemctl/inspect"
)

// Version is a record's pinned version, in parts so a conflict can say
// what changed.
type Version struct {
	Type      string `json:"type"`
	Content   string `json:"content"`
	Expiry    string `json:"expiry"`
	Companion string `json:"companion"`
}

// versionPartLens are the lengths of Version.Short's parts: content,
// expiry, companion.
var versionPartLens = [3]int{10, 6, 4}

// Short is the printed form: 20 hex characters, fixed positions (content
// with type, expiry, companion), short enough for a --from-file column.
func (v Version) Short() string {
	if v.Type == "" {
		return ""
	}
	parts := []string{v.Type + "\n" + v.Content, v.Expiry, v.Companion}
	var b strings.Builder
	for i, p := range parts {
		sum := sha1.Sum([]byte(p))
		b.WriteString(hex.EncodeToString(sum[:])[:versionPartLens[i]])
	}
	return b.String()
}

// DiffShort names what differs between a pinned short version and the
// current one ("" when they agree).
func DiffShort(pinned, now string) string {
	if pinned == now {
		return ""
	}
	if len(pinned) != len(now) {
		return "its version " + inspect.Sanitize(pinned) + " is not one idemctl prints (want 20 hex characters)"
	}
	names := []string{"its fields changed", "its TTL was re-set", "its lock companion changed"}
	var out []string
	at := 0
	for i, n := range versionPartLens {
		if pinned[at:at+n] != now[at:at+n] {
			out = append(out, names[i])
		}
		at += n
	}
	return strings.Join(out, ", ")
}

// ValidVersion reports whether s has the printed form of a version.
func ValidVersion(s string) bool {
	if len(s) != 20 {
		return false
	}
	_, err := hex.DecodeString(s)
	return err == nil
}
