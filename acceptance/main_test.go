// Package acceptance holds the suites that cut across commands: security,
// faults, topologies, hostile data, the real idempotency libraries and the
// terminal UI end to end, each against real servers through the clitest kit.
package acceptance

import (
	"os"
	"testing"

	"github.com/idemctl/idemctl/internal/testkit/consumerapp"
	"github.com/idemctl/idemctl/internal/testkit/redistest"
)

func TestMain(m *testing.M) {
	consumerapp.MainIfChild() // a stream consumer the messages suite started
	os.Exit(redistest.RunMain(m))
}
