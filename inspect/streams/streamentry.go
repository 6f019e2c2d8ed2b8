package streams

import (
	"context"
	_ "embed"
	"fmt"
	"regexp"

	"github.com/redis/go-redis/v9"

	"github.com/idemctl/idemctl/inspect"
)

//go:embed streamentry.lua
var streamEntryLua string

var streamEntryScript = redis.NewScript(streamEntryLua)

// Entry read caps: a value's head kept, and the fields returned.
const (
	DefaultEntryValueCap = 4096
	DefaultEntryFields   = 100
	MaxEntryValueCap     = 1 << 20
)

// Entry is one stream entry's fields as read under the caps: each
// name and value cut on the server, with its full length.
type Entry struct {
	Stream     inspect.Text `json:"stream"`
	ID         string       `json:"id"`
	Found      bool         `json:"found"`
	FieldCount int64        `json:"field_count"`
	Fields     []Field      `json:"fields"`
	FieldsCut  bool         `json:"fields_truncated"` // more fields than were returned
}

// Field is one field of an entry.
type Field struct {
	Name      inspect.Text `json:"name"`
	NameLen   int64        `json:"name_bytes"`
	Value     inspect.Text `json:"value"`
	ValueLen  int64        `json:"value_bytes"`
	Truncated bool         `json:"truncated"` // the name or the value is longer than shown
}

var streamIDPattern = regexp.MustCompile(`^[0-9]{1,20}(-[0-9]{1,20})?$`)

// ReadEntry reads one entry by a read-only script that returns each
// name and value cut to valueCap bytes, at most maxFields fields: a huge
// value is never sent.
func ReadEntry(ctx context.Context, c redis.UniversalClient, stream, id string, valueCap, maxFields int) (Entry, error) {
	e := Entry{Stream: inspect.Text(stream), ID: id, Fields: []Field{}}
	if !streamIDPattern.MatchString(id) {
		return e, fmt.Errorf("entry ID %q: want MILLISECONDS-SEQUENCE, such as 1700000000000-0", inspect.Sanitize(id))
	}
	if valueCap <= 0 {
		valueCap = DefaultEntryValueCap
	}
	if maxFields <= 0 {
		maxFields = DefaultEntryFields
	}
	valueCap = min(valueCap, MaxEntryValueCap)
	reply, err := evalShaLoading(ctx, c, streamEntryScript, []string{stream}, id, valueCap, maxFields).Slice()
	if err != nil {
		if isWrongType(err) {
			return e, fmt.Errorf("%s is not a stream", inspect.Sanitize(stream))
		}
		return e, streamErr("EVALSHA", stream, err)
	}
	return parseEntry(e, reply)
}

// evalShaLoading runs a read-only script by EVALSHA, loading it (SCRIPT
// LOAD) when the server's cache lacks it: never by EVAL, which the
// inspector role does not grant (it would run any script text).
func evalShaLoading(ctx context.Context, c redis.UniversalClient, s *redis.Script, keys []string, args ...any) *redis.Cmd {
	cmd := s.EvalSha(ctx, c, keys, args...)
	if isNoScript(cmd.Err()) && s.Load(ctx, c).Err() == nil {
		cmd = s.EvalSha(ctx, c, keys, args...)
	}
	return cmd
}

// parseEntry reads the script's flat reply into e.
func parseEntry(e Entry, reply []any) (Entry, error) {
	if len(reply) == 0 {
		return e, fmt.Errorf("stream entry script: empty reply")
	}
	if found, _ := reply[0].(int64); found != 1 {
		return e, nil
	}
	e.Found = true
	if len(reply) > 1 {
		e.FieldCount, _ = reply[1].(int64)
	}
	for i := 2; i+3 < len(reply); i += 4 {
		f := Field{Name: inspect.Text(replyString(reply[i])), Value: inspect.Text(replyString(reply[i+2]))}
		f.NameLen, _ = reply[i+1].(int64)
		f.ValueLen, _ = reply[i+3].(int64)
		f.Truncated = int64(len(f.Name)) < f.NameLen || int64(len(f.Value)) < f.ValueLen
		e.Fields = append(e.Fields, f)
	}
	e.FieldsCut = int64(len(e.Fields)) < e.FieldCount
	return e, nil
}
