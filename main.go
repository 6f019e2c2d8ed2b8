// Command idemctl inspects and repairs Redis-backed idempotency records: a
// terminal UI for on-call triage and scriptable subcommands with JSON output.
//
// Floor 6 of ARCHITECTURE.md, a program: it may import any floor below it.
package main

import (
	"os"

	"github.com/idemctl/idemctl/cli"
)

func main() { os.Exit(cli.Main()) }
