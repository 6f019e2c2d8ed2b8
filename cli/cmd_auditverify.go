package cli

import (
	"context"
	"fmt"
	"os"

	"github.com/spf13/pflag"

	"github.com/idemctl/idemctl/actions/audit"
	"github.com/idemctl/idemctl/internal/units"
)

// auditVerifyCmd is audit verify: the log's hash chain, walked.
type auditVerifyCmd struct {
	auditOptions
	head string
}

func (o *auditVerifyCmd) flags(fs *pflag.FlagSet) {
	o.auditOptions.flags(fs)
	fs.StringVar(&o.head, "head", "", "a head printed earlier (SEQ:DIGEST): prove that entry and all before it unchanged")
}

func (o *auditVerifyCmd) run(_ context.Context, a *app, args []string) error {
	var pin *audit.HeadPin
	if o.head != "" {
		p, err := audit.ParseHead(o.head)
		if err != nil {
			return usageErr("--head %q: %v", o.head, err)
		}
		pin = &p
	}
	path := ""
	if len(args) == 1 {
		path = args[0]
	} else {
		var err error
		if path, err = auditPathOf(a, &o.auditOptions); err != nil {
			return err
		}
	}
	rep, err := audit.Verify(path, pin)
	if os.IsNotExist(err) {
		return codeErr(ExitNotFound, "audit log %s: no such file", path)
	}
	if err != nil {
		return fmt.Errorf("audit log: %w", err)
	}
	if o.output == "json" {
		if err := writeJSON(a, map[string]any{"file": path, "chain": rep, "ok": rep.Break == nil}); err != nil {
			return err
		}
	} else {
		printChain(a, path, rep)
	}
	if b := rep.Break; b != nil {
		return codeErr(ExitTampered, "audit log %s: line %d (byte %d) %s", path, b.Line, b.Offset, b.What)
	}
	return nil
}

func printChain(a *app, path string, rep *audit.ChainReport) {
	if rep.Unchained > 0 {
		fmt.Fprintf(a.stdout, "%s before the chain (an older idemctl wrote them): read, not verifiable\n", units.Nouns(int64(rep.Unchained), "line", "lines"))
	}
	if rep.ChainStart > 0 {
		fmt.Fprintf(a.stdout, "the chain starts at line %d\n", rep.ChainStart)
	}
	if t := rep.Truncated; t != nil {
		fmt.Fprintf(a.stdout, "the last line (byte %d, %d bytes) is unfinished: a write was interrupted (a crash or a full disk), not tampering; the next write repairs it\n", t.Offset, t.Len)
	}
	if rep.Break == nil {
		fmt.Fprintf(a.stdout, "%s: the chain holds: %d entries over %d lines, head %s\n", path, rep.Entries, rep.Lines, orNone(rep.Head))
	}
}

func orNone(s string) string {
	if s == "" {
		return "(none: no chained entry yet)"
	}
	return s
}
