package units

import (
	"fmt"
	"strconv"
)

// FormatBytes renders a byte count compactly (1.5KiB, 300MiB).
func FormatBytes(n int64) string {
	if n < 0 {
		return "?"
	}
	if n < 1024 {
		return strconv.FormatInt(n, 10) + "B"
	}
	f := float64(n)
	for _, u := range []string{"KiB", "MiB", "GiB", "TiB"} {
		f /= 1024
		if f < 1024 || u == "TiB" {
			if f < 10 {
				return strconv.FormatFloat(f, 'f', 1, 64) + u
			}
			return strconv.FormatFloat(f, 'f', 0, 64) + u
		}
	}
	return strconv.FormatInt(n, 10) + "B"
}

// FormatMs renders a millisecond span compactly: 850ms, 42s, 5m03s, 3h12m, 4d02h.
func FormatMs(ms int64) string {
	if ms < 0 {
		return "-"
	}
	switch {
	case ms < 1000:
		return strconv.FormatInt(ms, 10) + "ms"
	case ms < 60_000:
		return fmt.Sprintf("%.1fs", float64(ms)/1000)
	case ms < 3_600_000:
		return fmt.Sprintf("%dm%02ds", ms/60_000, ms%60_000/1000)
	case ms < 86_400_000:
		return fmt.Sprintf("%dh%02dm", ms/3_600_000, ms%3_600_000/60_000)
	default:
		return fmt.Sprintf("%dd%02dh", ms/86_400_000, ms%86_400_000/3_600_000)
	}
}

// FormatTTL renders a PTTL reply: "none" for -1 (no expiry), "gone" for -2
// (no such key), "?" for any other negative (not read), else as FormatMs.
func FormatTTL(ms int64) string {
	switch {
	case ms == -1:
		return "none"
	case ms == -2:
		return "gone"
	case ms < 0:
		return "?"
	}
	return FormatMs(ms)
}

// FormatCount renders a count for people: 999, 9,832, 12,345, 1,234,567.
// Every count of four digits or more is grouped, so a column never shows
// 9832 beside 13,010.
func FormatCount(n int64) string {
	if n > -1000 && n < 1000 {
		return strconv.FormatInt(n, 10)
	}
	var buf [32]byte
	b := strconv.AppendInt(buf[:0], n, 10)
	digits := b
	sign := ""
	if n < 0 {
		sign, digits = "-", b[1:]
	}
	out := make([]byte, 0, len(b)+len(digits)/3)
	out = append(out, sign...)
	for i, c := range digits {
		if i > 0 && (len(digits)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, c)
	}
	return string(out)
}

// Nouns is a count with its noun, singular for one: "1 result",
// "2 results", "1,200 scans".
func Nouns(n int64, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return FormatCount(n) + " " + many
}
