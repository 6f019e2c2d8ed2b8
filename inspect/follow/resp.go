package follow

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// The watch connection speaks RESP3 itself (conn.go): a push and a reply
// are told apart by their first byte, and a frame it cannot parse ends
// the connection (never a guess).

// push is a RESP3 push frame (">"): an invalidation or a Pub/Sub message.
type push []any

// serverError is a "-" or "!" reply.
type serverError string

func (e serverError) Error() string { return string(e) }

// Caps on what a frame may claim: everything read from Redis is hostile.
const (
	maxBulk  = 4 << 20 // a key is far shorter; a value is never read here
	maxItems = 1 << 20
	maxDepth = 8
)

var errProtocol = errors.New("unparsable RESP3 frame")

// readFrame reads one frame: string, int64, nil, []any (arrays, sets and
// maps flattened), push, or serverError.
func readFrame(r *bufio.Reader) (any, error) { return readValue(r, 0) }

func readValue(r *bufio.Reader, depth int) (any, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("%w: nested too deep", errProtocol)
	}
	line, err := readLine(r)
	if err != nil {
		return nil, err
	}
	if len(line) == 0 {
		return nil, fmt.Errorf("%w: empty line", errProtocol)
	}
	kind, rest := line[0], string(line[1:])
	switch kind {
	case '+', '(', ',':
		return rest, nil
	case '-':
		return serverError(rest), nil
	case ':':
		n, err := strconv.ParseInt(rest, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%w: integer %q", errProtocol, rest)
		}
		return n, nil
	case '#':
		return rest == "t", nil
	case '_':
		return nil, nil
	case '$', '=', '!':
		return readBulk(r, kind, rest)
	case '*', '~', '>', '%', '|':
		return readAggregate(r, kind, rest, depth)
	}
	return nil, fmt.Errorf("%w: type byte %q", errProtocol, kind)
}

func readLine(r *bufio.Reader) ([]byte, error) {
	line, err := r.ReadSlice('\n')
	if err != nil {
		if errors.Is(err, bufio.ErrBufferFull) {
			return nil, fmt.Errorf("%w: line too long", errProtocol)
		}
		return nil, err
	}
	if len(line) < 2 || line[len(line)-2] != '\r' {
		return nil, fmt.Errorf("%w: line not ended by CRLF", errProtocol)
	}
	return line[:len(line)-2], nil
}

func readBulk(r *bufio.Reader, kind byte, size string) (any, error) {
	n, err := strconv.Atoi(size)
	if err != nil || n > maxBulk || n < -1 {
		return nil, fmt.Errorf("%w: bulk length %q", errProtocol, size)
	}
	if n == -1 {
		return nil, nil
	}
	buf := make([]byte, n+2)
	if _, err := io.ReadFull(r, buf); err != nil {
		return nil, err
	}
	if buf[n] != '\r' || buf[n+1] != '\n' {
		return nil, fmt.Errorf("%w: bulk not ended by CRLF", errProtocol)
	}
	s := string(buf[:n])
	if kind == '!' {
		return serverError(s), nil
	}
	if kind == '=' && len(s) >= 4 {
		s = s[4:] // verbatim: "txt:" before the text
	}
	return s, nil
}

func readAggregate(r *bufio.Reader, kind byte, size string, depth int) (any, error) {
	n, err := strconv.Atoi(size)
	if err != nil || n > maxItems || n < -1 {
		return nil, fmt.Errorf("%w: aggregate length %q", errProtocol, size)
	}
	if n == -1 {
		return nil, nil
	}
	if kind == '%' || kind == '|' {
		n *= 2
	}
	out := make([]any, 0, min(n, 1024))
	for range n {
		v, err := readValue(r, depth+1)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	switch kind {
	case '>':
		return push(out), nil
	case '|': // an attribute precedes the reply it describes: skip it
		return readValue(r, depth)
	}
	return out, nil
}

// writeCommand writes one command as a RESP array of bulk strings.
func writeCommand(w *bufio.Writer, args ...string) error {
	fmt.Fprintf(w, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(w, "$%d\r\n%s\r\n", len(a), a)
	}
	return w.Flush()
}
