package cli_test

import (
	"testing"

	"github.com/idemctl/idemctl/cli"
	"github.com/idemctl/idemctl/internal/testkit/clitest"
	"github.com/idemctl/idemctl/internal/testkit/redistest"
)

// The case, end to end: --url host:port scans.
func TestScanWithABareAddress(t *testing.T) {
	srv := redistest.Shared(t)
	clitest.Run(t, nil, "scan", "--url", srv.Addr, "--preset", "atlasmart", "-o", "json").MustCode(t, cli.ExitOK)
}
