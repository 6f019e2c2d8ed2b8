package lookup

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// parseRawRequest reads HTTP/1.1 text: a request line, headers, a blank
// line and the body (cut at Content-Length when it says less).
func parseRawRequest(data []byte) (*Request, error) {
	br := bufio.NewReader(bytes.NewReader(data))
	line, err := readLine(br)
	if err != nil {
		return nil, fmt.Errorf("request line: %v", err)
	}
	f := strings.Fields(line)
	if len(f) != 3 || !strings.HasPrefix(f[2], "HTTP/") {
		return nil, fmt.Errorf("request line %q: want METHOD TARGET HTTP/1.1", clip(line))
	}
	r := &Request{Method: f[0], Path: targetPath(f[1]), Headers: map[string]string{}}
	for {
		line, err := readLine(br)
		if err == io.EOF || err == nil && line == "" {
			break
		}
		if err != nil {
			return nil, err
		}
		name, value, ok := strings.Cut(line, ":")
		if !ok || strings.TrimSpace(name) == "" {
			return nil, fmt.Errorf("header line %q: want Name: value", clip(line))
		}
		name = strings.ToLower(strings.TrimSpace(name))
		value = strings.TrimSpace(value)
		if prev, ok := r.Headers[name]; ok {
			value = prev + ", " + value
		}
		r.Headers[name] = value
	}
	body, _ := io.ReadAll(br)
	if n, err := strconv.Atoi(r.Header("content-length")); err == nil && n >= 0 && n < len(body) {
		body = body[:n]
	}
	if len(body) > 0 {
		r.Body = body
	}
	return r, nil
}

// readLine is one line without its CRLF or LF; io.EOF only when nothing
// is left.
func readLine(br *bufio.Reader) (string, error) {
	s, err := br.ReadString('\n')
	if err == io.EOF && s != "" {
		err = nil
	}
	return strings.TrimRight(s, "\r\n"), err
}

func clip(s string) string {
	if len(s) > 60 {
		return s[:60] + "…"
	}
	return s
}
