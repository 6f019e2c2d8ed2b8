// Package verify asks the authoritative system whether a stuck record's
// side effect happened, through a hook: an executable named in the
// keyspace's config, run once per record with arguments taken from the
// record, that prints one JSON verdict. It holds no UI code and never
// writes: triage, the reaper and the TUI turn verdicts into plans for the
// executor in actions/.
//
// Floor 3 of ARCHITECTURE.md: it may import the write path, the rules, the
// read engine and the foundations (floors 0–2).
package verify

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/internal/units"
)

// Verdict is what the hook found in the authoritative system.
type Verdict string

const (
	Done    Verdict = "done"     // the side effect happened: reconcile with the hook's ref
	NotDone Verdict = "not_done" // it did not: the record may be failed
	Unknown Verdict = "unknown"  // cannot tell: leave the record alone
)

// Result is one hook run. Ref, Detail and Why are sanitized and bounded;
// Response is the hook's replay body exactly (bounded by the output cap),
// for the record: sanitize it before showing it.
type Result struct {
	Verdict  Verdict       `json:"verdict"`
	Ref      string        `json:"ref,omitempty"`
	Status   int           `json:"status,omitempty"`   // replay HTTP status; 0: the schema's
	Response *string       `json:"response,omitempty"` // replay body; nil: the schema's
	Detail   string        `json:"detail,omitempty"`
	Why      string        `json:"why,omitempty"` // unknown: why, in the operator's terms
	Took     time.Duration `json:"took_ns"`
}

// Bounds on what a hook may print.
const (
	MaxOutput = 64 << 10 // stdout; more is unknown
	maxStderr = 4 << 10  // kept for the reason of a failure
	maxRef    = 256
	maxDetail = 512
)

// unknown is an unknown result with the reason.
func unknown(format string, a ...any) Result {
	return Result{Verdict: Unknown, Why: inspect.Sanitize(units.OneLine(fmt.Sprintf(format, a...)))}
}

// parseOutput reads the hook's stdout: exactly one JSON object with a
// verdict, or unknown saying what was wrong with it.
func parseOutput(out []byte) Result {
	if len(bytes.TrimSpace(out)) == 0 {
		return unknown("the hook printed nothing")
	}
	if !utf8.Valid(out) {
		return unknown("the hook printed bytes that are not UTF-8 text")
	}
	dec := json.NewDecoder(bytes.NewReader(out))
	dec.UseNumber()
	var obj map[string]json.RawMessage
	var first json.RawMessage
	if err := dec.Decode(&first); err != nil {
		return unknown("the hook did not print JSON: %s", jsonErr(out, err))
	}
	if t := bytes.TrimSpace(first); len(t) == 0 || t[0] != '{' {
		return unknown("the hook printed JSON that is not an object (want {\"verdict\": …})")
	}
	if err := json.Unmarshal(first, &obj); err != nil {
		return unknown("the hook did not print a JSON object: %s", jsonErr(first, err))
	}
	if rest := bytes.TrimSpace(out[dec.InputOffset():]); len(rest) > 0 {
		return unknown("the hook printed more than one JSON object (%d more bytes after the first)", len(rest))
	}
	return fromObject(obj)
}

// fromObject checks the verdict object's fields one by one, so every
// message names the field in the hook's terms.
func fromObject(obj map[string]json.RawMessage) Result {
	var r Result
	v, err := stringField(obj, "verdict")
	if err != nil {
		return unknown("%v", err)
	}
	switch Verdict(v) {
	case Done, NotDone, Unknown:
		r.Verdict = Verdict(v)
	case "":
		return unknown(`the hook's JSON has no "verdict" (want done, not_done or unknown)`)
	default:
		return unknown(`the hook's "verdict" is %q (want done, not_done or unknown)`, units.Clip(v, 40))
	}
	if r.Ref, err = stringField(obj, "ref"); err != nil {
		return unknown("%v", err)
	}
	if len(r.Ref) > maxRef {
		return unknown(`the hook's "ref" is %d bytes (at most %d)`, len(r.Ref), maxRef)
	}
	if r.Ref != inspect.Sanitize(r.Ref) {
		return unknown(`the hook's "ref" holds control or invisible characters: %s`, r.Ref)
	}
	if r.Status, err = statusField(obj); err != nil {
		return unknown("%v", err)
	}
	if raw, ok := obj["response"]; ok && string(raw) != "null" {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			s = string(bytes.TrimSpace(raw)) // an object or array: its JSON text is the body
		}
		r.Response = &s
	}
	d, err := stringField(obj, "detail")
	if err != nil {
		return unknown("%v", err)
	}
	r.Detail = units.Clip(inspect.Sanitize(units.OneLine(d)), maxDetail)
	if r.Verdict == Unknown {
		r.Why = "the hook could not tell"
		if r.Detail != "" {
			r.Why += ": " + r.Detail
		}
	}
	return r
}

// stringField reads an optional string field; null counts as absent.
func stringField(obj map[string]json.RawMessage, name string) (string, error) {
	raw, ok := obj[name]
	if !ok || string(raw) == "null" {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", fmt.Errorf("the hook's %q is not a string: %s", name, units.Clip(string(raw), 40))
	}
	return s, nil
}

// statusField reads "status": a number or a numeric string, 100 to 599.
func statusField(obj map[string]json.RawMessage) (int, error) {
	raw, ok := obj["status"]
	if !ok || string(raw) == "null" {
		return 0, nil
	}
	text := strings.Trim(string(raw), `"`)
	n, err := strconv.Atoi(text)
	if err != nil || n < 100 || n > 599 {
		return 0, fmt.Errorf(`the hook's "status" is %s (want an HTTP status, 100 to 599)`, units.Clip(string(raw), 40))
	}
	return n, nil
}

// jsonErr words a decoding error of data without Go's type names or
// quoting (unknown sanitizes the message once, whole).
func jsonErr(data []byte, err error) string {
	var se *json.SyntaxError
	if errors.As(err, &se) && se.Offset > 0 && int(se.Offset) <= len(data) {
		r, _ := utf8.DecodeRune(data[se.Offset-1:])
		return fmt.Sprintf("unexpected %s at byte %d", describeRune(r), se.Offset)
	}
	if errors.Is(err, io.ErrUnexpectedEOF) || strings.Contains(err.Error(), "unexpected EOF") {
		return "the output ends inside a JSON value"
	}
	return strings.TrimPrefix(err.Error(), "json: ")
}

// describeRune names a character: printable ones quoted, others by code.
func describeRune(r rune) string {
	if unicode.IsPrint(r) {
		return "'" + string(r) + "'"
	}
	return fmt.Sprintf("control character U+%04X", r)
}
