package inspect

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"time"
)

// fields holds one record's attributes as read from Redis, before
// classification. Values are the stored text (JSON scalars as their literal
// text, JSON strings unquoted).
type fields struct {
	val      [numSlots]string
	has      [numSlots]bool
	respLen  int64  // -1: no response
	required uint16 // Schema.Requires paths seen, a bit each
	// fieldTTL is the earliest own TTL (ms) of the mapped hash fields of a
	// key without a TTL (-1: none has one), when fieldTTLRead.
	// fieldTTLMixed: present fields end at different times (or some never).
	fieldTTL                    int64
	fieldTTLRead, fieldTTLMixed bool
	decodeErr                   bool
	truncated                   bool
	// fpLong: the fingerprint is longer than a record keeps (512 bytes) or
	// than the read cap; it is present, never "missing".
	fpLong bool
}

// decodeJSON pulls the schema's fields out of a JSON object. A value cut by
// the read cap still yields the fields that came before the cut.
func decodeJSON(s *Schema, data []byte, truncated bool, f *fields) {
	f.respLen = -1
	want := s.paths
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	err := walkJSON(dec, "", 0, func(path string, raw json.RawMessage) {
		if slots, ok := want[path]; ok {
			v := jsonScalarText(raw)
			for _, slot := range slots { // roles may share one path (state and status)
				if slot >= numSlots {
					f.required |= 1 << (slot - numSlots)
					continue
				}
				f.val[slot], f.has[slot] = v, true
			}
		}
		if s.Response != "" && path == s.Response {
			f.respLen = int64(len(raw))
		}
	}, want, s.Response)
	if err != nil && !truncated {
		f.decodeErr = true
	}
	if truncated && s.Response != "" && f.respLen < 0 {
		f.truncated = true
	}
}

const maxJSONDepth = 32

// walkJSON visits the members of one JSON object, descending into nested
// objects only when some wanted path lies below.
func walkJSON(dec *json.Decoder, prefix string, depth int, visit func(string, json.RawMessage), want map[string][]int, resp string) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return errNotObject
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		name, _ := tok.(string)
		path := name
		if prefix != "" {
			path = prefix + "." + name
		}
		if depth < maxJSONDepth && wantsBelow(path, want, resp) {
			// Peek: only objects can hold wanted paths below.
			var raw json.RawMessage
			if err := dec.Decode(&raw); err != nil {
				return err
			}
			if len(raw) > 0 && raw[0] == '{' {
				sub := json.NewDecoder(bytes.NewReader(raw))
				sub.UseNumber()
				if err := walkJSON(sub, path, depth+1, visit, want, resp); err != nil {
					return err
				}
			}
			visit(path, raw)
			continue
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return err
		}
		visit(path, raw)
	}
	_, err = dec.Token()
	return err
}

type jsonErr string

func (e jsonErr) Error() string { return string(e) }

const errNotObject = jsonErr("not a JSON object")

func wantsBelow(path string, want map[string][]int, resp string) bool {
	p := path + "."
	if strings.HasPrefix(resp, p) {
		return true
	}
	for w := range want {
		if strings.HasPrefix(w, p) {
			return true
		}
	}
	return false
}

// jsonScalarText renders a JSON scalar as text: strings unquoted, numbers and
// literals as written, objects and arrays as their JSON.
func jsonScalarText(raw json.RawMessage) string {
	if len(raw) > 0 && raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return s
		}
	}
	if string(raw) == "null" {
		return ""
	}
	return string(raw)
}

// parseTimeMs converts a stored timestamp to epoch milliseconds.
func parseTimeMs(v string, unit TimeUnit) (int64, bool) {
	v = strings.TrimSpace(v)
	if unit == UnitRFC3339 {
		t, err := time.Parse(time.RFC3339Nano, v)
		if err != nil {
			return 0, false
		}
		return t.UnixMilli(), true
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || f < 0 {
		return 0, false
	}
	if unit != UnitMillis {
		f *= 1000
	}
	if f > 253402300799000 { // past year 9999: garbage, not a time
		return 0, false
	}
	return int64(f), true
}
