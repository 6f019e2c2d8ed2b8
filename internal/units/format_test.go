package units

import (
	"testing"
	"time"
	"unicode/utf8"
)

func TestFormatTTL(t *testing.T) {
	for ms, want := range map[int64]string{-1: "none", -2: "gone", -3: "?", 0: "0ms", 850: "850ms", 90_000: "1m30s"} {
		if got := FormatTTL(ms); got != want {
			t.Errorf("FormatTTL(%d) = %q, want %q", ms, got, want)
		}
	}
}

func TestFormatCount(t *testing.T) {
	for n, want := range map[int64]string{
		0: "0", 999: "999", 1000: "1,000", 9832: "9,832", 10_000: "10,000", 123_456: "123,456", 1_234_567: "1,234,567",
		-999: "-999", -9999: "-9,999", -123_456: "-123,456", -1_234_567: "-1,234,567",
		9_223_372_036_854_775_807: "9,223,372,036,854,775,807", -9_223_372_036_854_775_808: "-9,223,372,036,854,775,808",
	} {
		if got := FormatCount(n); got != want {
			t.Errorf("FormatCount(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestClip(t *testing.T) {
	cases := []struct {
		s    string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"exactly", 7, "exactly"},
		{"too long", 5, "too …"},
		{"abc", 1, "…"},
		{"abc", 0, ""},
		{"héllo wörld", 11, "héllo wörld"}, // 11 characters in 13 bytes: not cut
		{"héllo wörld", 7, "héllo …"},
		{"日本語のテキスト", 4, "日本語…"},
		{"🙂🙂🙂", 2, "🙂…"},
	}
	for _, c := range cases {
		got := Clip(c.s, c.n)
		if got != c.want {
			t.Errorf("Clip(%q, %d) = %q, want %q", c.s, c.n, got, c.want)
		}
		if !utf8.ValidString(got) || utf8.RuneCountInString(got) > max(c.n, 0) {
			t.Errorf("Clip(%q, %d) = %q: split a character or too long", c.s, c.n, got)
		}
	}
}

func TestOneLine(t *testing.T) {
	for in, want := range map[string]string{
		"plain":                            "plain",
		"first line\nsecond line":          "first line second line",
		"  padded\r\n\tand   spaced \n":    "padded and spaced",
		"ERR Error running script\n  at 3": "ERR Error running script at 3",
	} {
		if got := OneLine(in); got != want {
			t.Errorf("OneLine(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestConfigDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		6 * time.Hour: "6h", 90 * time.Second: "1m30s", 45 * time.Second: "45s", 90 * time.Minute: "1h30m",
		10 * time.Minute: "10m", 0: "0s", 1500 * time.Millisecond: "2s", 48 * time.Hour: "48h",
	} {
		if got := ConfigDuration(d); got != want {
			t.Errorf("ConfigDuration(%v) = %q, want %q", d, got, want)
		}
		if d > 0 {
			if back, err := ParseDuration(ConfigDuration(d)); err != nil || back != d.Round(time.Second) {
				t.Errorf("ParseDuration(%q) = %v, %v", ConfigDuration(d), back, err)
			}
		}
	}
}

func TestParseShare(t *testing.T) {
	for s, want := range map[string]float64{"1%": 0.01, " 20% ": 0.2, "0.05": 0.05, "99.5%": 0.995} {
		if got, err := ParseShare(s); err != nil || got != want {
			t.Errorf("ParseShare(%q) = %v, %v; want %v", s, got, err, want)
		}
	}
	for _, s := range []string{"", "0", "100%", "1", "-1%", "x%", "1.5"} {
		if _, err := ParseShare(s); err == nil {
			t.Errorf("ParseShare(%q) accepted", s)
		}
	}
}

func TestClipMiddle(t *testing.T) {
	for _, c := range []struct {
		s    string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"abcdefghij", 10, "abcdefghij"},
		{"atlasmart:ch23:idem:customer-11:POST:/v2/checkout:confirm-0042", 30, "atlasmart…heckout:confirm-0042"},
		{"ééééééééééüü", 7, "éé…ééüü"},
		{"abcdef", 2, "ef"},
	} {
		if got := ClipMiddle(c.s, c.n); got != c.want || len([]rune(got)) > c.n {
			t.Errorf("ClipMiddle(%q, %d) = %q, want %q", c.s, c.n, got, c.want)
		}
	}
}

func TestNouns(t *testing.T) {
	for n, want := range map[int64]string{0: "0 results", 1: "1 result", 2: "2 results", 1200: "1,200 results"} {
		if got := Nouns(n, "result", "results"); got != want {
			t.Errorf("Nouns(%d) = %q, want %q", n, got, want)
		}
	}
}
