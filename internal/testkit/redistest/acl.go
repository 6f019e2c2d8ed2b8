package redistest

import (
	"context"
	"testing"

	"github.com/redis/go-redis/v9"
)

// ACLUser creates (ACL SETUSER) the user name with rules on the server of
// admin, for the test: it is deleted when the test ends.
func ACLUser(t testing.TB, admin *redis.Client, name string, rules ...string) {
	t.Helper()
	args := []any{"ACL", "SETUSER", name}
	for _, r := range rules {
		args = append(args, r)
	}
	if err := admin.Do(context.Background(), args...).Err(); err != nil {
		t.Fatalf("ACL SETUSER %s: %v", name, err)
	}
	t.Cleanup(func() { admin.Do(context.Background(), "ACL", "DELUSER", name) })
}
