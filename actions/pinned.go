package actions

import (
	"context"
	"fmt"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/idemctl/idemctl/actions/write"
	"github.com/idemctl/idemctl/inspect"
)

// ReadVersions reads the printed version (Version.Short) of each record,
// in one pipeline, for --from-file lines pinned to what a scan showed: a
// write from such a line refuses a record that changed in any field, TTL
// or companion since. errs[i] says why record i could not be pinned.
func ReadVersions(ctx context.Context, c redis.UniversalClient, ks *inspect.Keyspace, recs []inspect.Record) (shorts []string, errs []error) {
	shorts, errs = make([]string, len(recs)), make([]error, len(recs))
	keys := make([][]string, len(recs))
	for i, r := range recs {
		keys[i] = scriptKeys(r.Key, companionKey(ks, r.Key, r.Flags.Has(inspect.FlagLockOnly)))
	}
	cmds := sendVersions(ctx, c, keys, !noScriptFlags.Load())
	if len(cmds) > 0 && compileRefused(cmds[0].Err()) {
		noScriptFlags.Store(true)
		cmds = sendVersions(ctx, c, keys, false)
	}
	for i, cmd := range cmds {
		reply, err := cmd.StringSlice()
		if err != nil && crossSlot(err) { // the companion in another slot: read apart
			var v write.Version
			if v, err = fetchVersion(ctx, c, keys[i][0], keys[i][1]); err == nil {
				shorts[i] = v.Short()
			}
			errs[i] = err
			continue
		}
		switch {
		case err != nil:
			errs[i] = err
		case len(reply) == 2 && reply[0] == "too_large":
			errs[i] = fmt.Errorf("%s fields, more than idemctl pins (4,096)", reply[1])
		case len(reply) != 4:
			errs[i] = fmt.Errorf("unexpected reply from the version script: %q", reply)
		default:
			shorts[i] = write.Version{Type: reply[0], Content: reply[1], Expiry: reply[2], Companion: reply[3]}.Short()
		}
	}
	return shorts, errs
}

// sendVersions pipelines the read-version script over each key set.
func sendVersions(ctx context.Context, c redis.UniversalClient, keys [][]string, flagged bool) []*redis.Cmd {
	script := readVersionPlain
	if flagged {
		script = readVersion
	}
	pipe := c.Pipeline()
	cmds := make([]*redis.Cmd, len(keys))
	for i, k := range keys {
		cmds[i] = script.send(ctx, pipe, "eval", script.src, k, nil)
	}
	_, _ = pipe.Exec(ctx) // each command keeps its own error
	return cmds
}

func compileRefused(err error) bool {
	return err != nil && isServerError(err) && strings.Contains(err.Error(), "compiling script")
}
