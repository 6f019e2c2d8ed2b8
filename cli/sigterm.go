package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"
)

// signalGrace is how long a command has, once SIGINT or SIGTERM arrives,
// to stop at its next check (a bulk write finishes the write in flight and
// its audit line). A command blocked where no check comes — stdin that
// stays open, a prompt nobody answers — is ended then, so a signal is
// always honoured.
const signalGrace = 3 * time.Second

// exitAfterGrace ends the process signalGrace after ctx (cancelled by the
// signal) is done; a command that returns first never sees it.
func exitAfterGrace(ctx context.Context, stderr io.Writer) {
	go func() {
		<-ctx.Done()
		time.Sleep(signalGrace)
		fmt.Fprintln(stderr, "idemctl: interrupted")
		os.Exit(ExitInterrupt)
	}()
}
