package streams

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/internal/testkit/redistest"
	"github.com/idemctl/idemctl/internal/testkit/streamtest"
)

// seedStream is the shared consumer-group fixture (streamtest.SeedGroups).
func seedStream(t *testing.T, c redis.UniversalClient, key string) []string {
	return streamtest.SeedGroups(t, c, key)
}

func TestReadStreamsGroupsAndPending(t *testing.T) {
	_, c := redistest.SharedClient(t)
	ctx := context.Background()
	ids := seedStream(t, c, "st:orders")
	c.Set(ctx, "st:not-a-stream", "x", 0)
	rep, err := Read(ctx, c, Space{Name: "orders", Match: "st:*"}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Streams) != 1 || rep.Streams[0].Key != "st:orders" || rep.Limited || len(rep.Notes) != 0 {
		t.Fatalf("streams: %+v", rep)
	}
	groups := rep.Streams[0].Groups
	if len(groups) != 2 || groups[0].Name != "audit" || groups[1].Name != "billing" {
		t.Fatalf("groups: %+v", groups)
	}
	audit, g := groups[0], groups[1]
	if audit.Pending != 0 || len(audit.Entries) != 0 || audit.Oldest != nil || audit.Lag == nil || *audit.Lag != 0 {
		t.Errorf("audit: %+v", audit)
	}
	if g.Pending != 4 || g.Consumers != 2 || g.Stale != 1 || g.Poison != 1 || g.Truncated || g.Lag == nil || *g.Lag != 1 {
		t.Errorf("billing: pending %d consumers %d stale %d poison %d lag %v", g.Pending, g.Consumers, g.Stale, g.Poison, g.Lag)
	}
	want := []struct {
		id, consumer  string
		deliveries    int64
		stale, poison bool
	}{{ids[0], "c1", 1, true, false}, {ids[2], "c1", 7, false, true}, {ids[3], "c2", 1, false, false}, {ids[4], "c2", 1, false, false}}
	if len(g.Entries) != len(want) {
		t.Fatalf("entries: %+v", g.Entries)
	}
	for i, w := range want {
		e := g.Entries[i]
		if e.ID != w.id || string(e.Consumer) != w.consumer || e.Deliveries != w.deliveries || e.Stale != w.stale || e.Poison != w.poison || e.Stream != "st:orders" || e.Group != "billing" {
			t.Errorf("entry %d: %+v, want %+v", i, e, w)
		}
	}
	if idle := g.Entries[0].Idle.D(); idle < 10*time.Minute || idle > 10*time.Minute+time.Minute {
		t.Errorf("stale entry idle %v, want about 10m", idle)
	}
	if g.Oldest == nil || g.Oldest.ID != ids[0] || g.OldestAge == nil || g.OldestAge.D() < time.Hour || g.OldestAge.D() > time.Hour+time.Minute {
		t.Errorf("oldest %+v age %v, want %s about 1h", g.Oldest, g.OldestAge, ids[0])
	}
	if g.Summary.Count != 4 || g.Summary.Smallest != ids[0] || g.Summary.Largest != ids[4] || len(g.Summary.PerConsumer) != 2 ||
		g.Summary.PerConsumer[0] != (ConsumerCount{"c1", 2}) || g.Summary.PerConsumer[1] != (ConsumerCount{"c2", 2}) {
		t.Errorf("summary: %+v", g.Summary)
	}
	if len(g.ConsumerList) != 2 || g.ConsumerList[0].Name != "c1" || g.ConsumerList[0].Pending != 2 || g.ConsumerList[1].Pending != 2 {
		t.Errorf("consumers: %+v", g.ConsumerList)
	}
}

// The caps hold and say so: pending entries per group, streams, groups.
func TestReadStreamsBounds(t *testing.T) {
	_, c := redistest.SharedClient(t)
	ctx := context.Background()
	seedStream(t, c, "st:a")
	seedStream(t, c, "st:b")
	rep, err := Read(ctx, c, Space{Match: "st:*", Groups: []string{"billing"}, MaxDeliveries: 10, ProcessingTimeout: time.Hour},
		Options{MaxPending: 2, MaxStreams: 1})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Limited || len(rep.Streams) != 1 || rep.Space != "st:*" {
		t.Fatalf("want one stream, limited: %+v", rep)
	}
	g := rep.Streams[0].Groups
	if len(g) != 1 || g[0].Name != "billing" || !g[0].Truncated || len(g[0].Entries) != 2 || !strings.HasSuffix(g[0].Entries[1].ID, "-3") {
		t.Fatalf("billing only, cut at 2: %+v", g)
	}
	if g[0].Stale != 0 || g[0].Poison != 0 {
		t.Errorf("an hour's timeout and 10 deliveries flag nothing: %+v", g[0])
	}
}

// A key that stops being a stream, or a group deleted, mid-read is skipped
// with a note (the server's real replies).
func TestStreamGoneNotes(t *testing.T) {
	_, c := redistest.SharedClient(t)
	ctx := context.Background()
	c.Set(ctx, "st:s", "x", 0)
	_, err := c.XInfoGroups(ctx, "st:s").Result()
	if note, ok := streamGone("st:s", "", err); !ok || note != "skipped stream st:s: the key is no longer a stream" {
		t.Errorf("WRONGTYPE: %q %v (%v)", note, ok, err)
	}
	c.XAdd(ctx, &redis.XAddArgs{Stream: "st:t", Values: []any{"a", 1}})
	_, err = c.XPending(ctx, "st:t", "gone").Result()
	if note, ok := streamGone("st:t", "gone", err); !ok || note != "skipped group gone of stream st:t: the group was deleted while it was read" {
		t.Errorf("NOGROUP: %q %v (%v)", note, ok, err)
	}
	_, err = c.XInfoGroups(ctx, "st:none").Result()
	if note, ok := streamGone("st:none", "", err); !ok || !strings.Contains(note, "deleted") {
		t.Errorf("no such key: %q %v (%v)", note, ok, err)
	}
}

// An ACL without XPENDING gets one line naming the command to grant.
func TestReadStreamsNoPerm(t *testing.T) {
	srv, admin := redistest.SharedClient(t)
	ctx := context.Background()
	seedStream(t, admin, "st:orders")
	redistest.ACLUser(t, admin, "streamer", "reset", "on", ">pw", "~*", "+@all", "-xpending")
	c := redis.NewClient(&redis.Options{Addr: srv.Addr, Username: "streamer", Password: "pw"})
	defer c.Close()
	_, err := Read(ctx, c, Space{Match: "st:*"}, Options{})
	if err == nil || !strings.HasPrefix(err.Error(), "the server's ACL does not let this user run XPENDING (grant +xpending): NOPERM") || strings.Contains(err.Error(), "\n") {
		t.Errorf("err %v", err)
	}
}

// An entry's fields come back cut on the server, their lengths said; a
// hostile value is data, never terminal control.
func TestReadStreamEntry(t *testing.T) {
	_, c := redistest.SharedClient(t)
	ctx := context.Background()
	huge := strings.Repeat("z", 10<<20)
	id, err := c.XAdd(ctx, &redis.XAddArgs{Stream: "st:h", Values: []any{"evil\x1b]52;c;aGk=\x07", "\x1b[2Jboom", "big", huge}}).Result()
	if err != nil {
		t.Fatal(err)
	}
	e, err := ReadEntry(ctx, c, "st:h", id, 16, 0)
	if err != nil {
		t.Fatal(err)
	}
	if !e.Found || e.FieldCount != 2 || len(e.Fields) != 2 || e.FieldsCut {
		t.Fatalf("entry: %+v", e)
	}
	f0, f1 := e.Fields[0], e.Fields[1]
	if f0.Name != "evil\x1b]52;c;aGk=\x07" || f0.NameLen != 16 || f0.Value != "\x1b[2Jboom" || f0.ValueLen != 8 || f0.Truncated {
		t.Errorf("field 0: %+v", f0)
	}
	if f1.Name != "big" || f1.Value != inspect.Text(huge[:16]) || f1.ValueLen != 10<<20 || !f1.Truncated {
		t.Errorf("field 1: name %q value %q len %d", f1.Name, f1.Value, f1.ValueLen)
	}
	if got := inspect.Sanitize(string(f0.Value)); got != `\x1b[2Jboom` {
		t.Errorf("sanitized %q", got)
	}
	if e, err := ReadEntry(ctx, c, "st:h", "1-1", 16, 1); err != nil || e.Found {
		t.Errorf("absent entry: %+v %v", e, err)
	}
	if _, err := ReadEntry(ctx, c, "st:h", "-", 16, 1); err == nil || !strings.Contains(err.Error(), "want MILLISECONDS-SEQUENCE") {
		t.Errorf("bad id: %v", err)
	}
	c.Set(ctx, "st:str", "x", 0)
	if _, err := ReadEntry(ctx, c, "st:str", "1-1", 16, 1); err == nil || err.Error() != "st:str is not a stream" {
		t.Errorf("not a stream: %v", err)
	}
	if e, _ := ReadEntry(ctx, c, "st:h", id, 16, 1); len(e.Fields) != 1 || !e.FieldsCut {
		t.Errorf("field cap: %+v", e)
	}
}

// On a cluster every primary's streams are found and read.
func TestReadStreamsCluster(t *testing.T) {
	cl := redistest.StartCluster(t, 3, 0)
	c := cl.Client()
	defer c.Close()
	keys := []string{"st:{a}", "st:{b}", "st:{c}", "st:{d}"}
	for _, k := range keys {
		seedStream(t, c, k)
	}
	rep, err := Read(context.Background(), c, Space{Match: "st:*"}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	nodes := map[string]bool{}
	if len(rep.Streams) != len(keys) {
		t.Fatalf("streams: %+v", rep.Streams)
	}
	for i, st := range rep.Streams {
		nodes[st.Node] = true
		if string(st.Key) != keys[i] || len(st.Groups) != 2 || st.Groups[1].Pending != 4 || st.Groups[1].Stale != 1 {
			t.Errorf("stream %d: %+v", i, st)
		}
	}
	if len(nodes) < 2 {
		t.Errorf("streams on %d node(s): %v", len(nodes), nodes)
	}
}
