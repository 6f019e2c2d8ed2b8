package actions

import (
	"os"
	"testing"

	"github.com/idemctl/idemctl/internal/testkit/redistest"
)

// The guarded writes are tested against a real redis-server: the CAS
// scripts, ACLs and connection faults are the server's own behaviour.
func TestMain(m *testing.M) { os.Exit(redistest.RunMain(m)) }
