package follow

import (
	"bufio"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/idemctl/idemctl/inspect"
)

// The view's memory per record, without keys (the exporter's counts): the
// issue's target is at most 40 bytes.
func TestViewMemoryPerRecord(t *testing.T) {
	ks := &inspect.Keyspace{Name: "k", ProcessingTimeout: time.Minute}
	const n = 1_000_000
	before := heapInUse()
	v := newView(false)
	for i := range n {
		r := inspect.Record{Key: fmt.Sprintf("k:%d", i), Keyspace: ks, State: inspect.StateSucceeded, AgeMs: -1}
		v.upsert(0, &r, 0, 0)
	}
	per := float64(heapInUse()-before) / n
	runtime.KeepAlive(v)
	t.Logf("view without keys: %.1f bytes a record at %d records", per, n)
	if per > 40 {
		t.Errorf("%.1f bytes a record, want at most 40", per)
	}
}

func heapInUse() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// A processing record turns stale at its deadline; one completed before
// it does not.
func TestViewStaleDeadline(t *testing.T) {
	ks := &inspect.Keyspace{Name: "k", ProcessingTimeout: time.Second}
	v := newView(true)
	a := inspect.Record{Key: "a", Keyspace: ks, State: inspect.StateProcessing, AgeMs: 400}
	b := inspect.Record{Key: "b", Keyspace: ks, State: inspect.StateProcessing, AgeMs: 0}
	v.upsert(0, &a, 1000, 0)
	v.upsert(0, &b, 1000, 0)
	if due := v.due(1600); len(due) != 0 {
		t.Fatalf("stale before the deadline: %v", due)
	}
	if due := v.due(1601); len(due) != 1 || due[0].rec.Key != "a" {
		t.Fatalf("due at 1601: %+v", due)
	}
	b.State = inspect.StateSucceeded
	v.upsert(0, &b, 1500, 0)
	if due := v.due(5000); len(due) != 0 {
		t.Fatalf("a completed record turned stale: %+v", due)
	}
}

// Hostile frames end the connection with a protocol error, never a
// panic or a guess.
func TestReadFrameHostile(t *testing.T) {
	for _, in := range []string{
		"?x\r\n", "$99999999999\r\n", "*-5\r\n", "$3\r\nabcd\r\n", ":x\r\n", "no crlf\n",
		strings.Repeat("*1\r\n", 20) + ":1\r\n", "*2000000\r\n",
	} {
		_, err := readFrame(bufio.NewReader(strings.NewReader(in)))
		if err == nil {
			t.Errorf("%q: no error", in)
		}
	}
	v, err := readFrame(bufio.NewReader(strings.NewReader(">2\r\n$10\r\ninvalidate\r\n*2\r\n$1\r\na\r\n$1\r\nb\r\n")))
	if p, ok := v.(push); err != nil || !ok || len(p) != 2 {
		t.Fatalf("invalidation: %#v %v", v, err)
	}
}

type recordingSink struct {
	keys   []string
	misses []string
}

func (s *recordingSink) changed(k []string)         { s.keys = append(s.keys, k...) }
func (s *recordingSink) missed(addr, reason string) { s.misses = append(s.misses, reason) }

// A flush is a miss; an invalidation's keys are changes; a push it does
// not know ends the connection.
func TestHandlePush(t *testing.T) {
	wc := &watchConn{ep: endpoint{addr: "x"}}
	s := &recordingSink{}
	if err := wc.handle(push{"invalidate", []any{"a", "b"}}, s); err != nil || len(s.keys) != 2 {
		t.Fatalf("keys %v, %v", s.keys, err)
	}
	if err := wc.handle(push{"invalidate", nil}, s); err != nil || len(s.misses) != 1 {
		t.Fatalf("flush: %v, %v", s.misses, err)
	}
	if err := wc.handle(push{"invalidate", []any{int64(1)}}, s); !errors.Is(err, errProtocol) {
		t.Fatalf("bad keys: %v", err)
	}
	if err := wc.handle(push{"something-else"}, s); !errors.Is(err, errProtocol) {
		t.Fatalf("unknown push: %v", err)
	}
	if err := wc.handle(push{"pmessage", "p", "__keyspace@0__:k:1", "hset"}, s); err != nil || s.keys[2] != "k:1" {
		t.Fatalf("notification: %v %v", s.keys, err)
	}
}
