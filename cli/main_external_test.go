package cli_test

import (
	"os"
	"testing"

	"github.com/idemctl/idemctl/internal/testkit/redistest"
)

func TestMain(m *testing.M) { os.Exit(redistest.RunMain(m)) }
