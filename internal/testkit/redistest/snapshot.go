package redistest

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Snapshot has the server write its dataset (SAVE) and returns the RDB
// file's path, in the server's directory: the file the server itself
// wrote, for the tests of reading snapshots offline.
func (s *Server) Snapshot(t testing.TB) string {
	t.Helper()
	c := s.Client(0)
	defer c.Close()
	ctx := context.Background()
	name, err := c.ConfigGet(ctx, "dbfilename").Result()
	if err != nil {
		t.Fatalf("CONFIG GET dbfilename: %v", err)
	}
	// A replica's sync (redis-cli --rdb) may still be saving: wait it out.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		err := c.Save(ctx).Err()
		if err == nil {
			break
		}
		if !strings.Contains(err.Error(), "in progress") || time.Now().After(deadline) {
			t.Fatalf("SAVE: %v", err)
		}
	}
	path := filepath.Join(s.Dir, name["dbfilename"])
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("SAVE wrote no file: %v", err)
	}
	return path
}
