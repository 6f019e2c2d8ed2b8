package snapshot

import (
	"os"
	"testing"

	"github.com/idemctl/idemctl/internal/testkit/redistest"
)

// Integration tests in this package talk to a real redis-server.
func TestMain(m *testing.M) { os.Exit(redistest.RunMain(m)) }
