package follow

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/inspect/topology"
)

// choose picks the mode and, for a live one, opens a watch connection on
// every primary and starts its watcher. why is one line for the user when
// the mode is not tracking.
func (f *Follower) choose(ctx context.Context) (Mode, string, error) {
	if f.opt.Mode == ModePeriodic {
		return ModePeriodic, "periodic passes were asked for", nil
	}
	prefixes, why := Prefixes(f.kss)
	if why != "" {
		return ModePeriodic, why, nil
	}
	prims, err := topology.Primaries(ctx, f.c)
	if err != nil {
		return 0, "", err
	}
	eps := make([]endpoint, 0, len(prims))
	for _, p := range prims {
		ep, err := endpointOf(p.Addr, p.Client)
		if err != nil {
			return ModePeriodic, "cannot open a watch connection: " + err.Error(), nil
		}
		eps = append(eps, ep)
	}
	spec := watchSpec{prefixes: prefixes, heartbeat: f.opt.Heartbeat, timeout: f.opt.Timeout}
	var refused []string
	for _, m := range []Mode{ModeTracking, ModeNotifications} {
		if f.opt.Mode != ModeAuto && f.opt.Mode != m {
			continue
		}
		spec.mode = m
		if m == ModeNotifications {
			if why := f.notificationsOff(ctx); why != "" {
				refused = append(refused, why)
				continue
			}
		}
		conns, err := openAll(ctx, eps, spec)
		if isRefused(err) {
			refused = append(refused, fmt.Sprintf("%s refused (%v)", m, err))
			continue
		}
		if err != nil {
			return 0, "", err
		}
		f.spec = spec
		for i, wc := range conns {
			f.startWatch(ctx, eps[i], wc)
		}
		return m, strings.Join(refused, "; "), nil
	}
	return ModePeriodic, "periodic passes: " + strings.Join(refused, "; "), nil
}

// openAll opens a watch connection on every endpoint, or none.
func openAll(ctx context.Context, eps []endpoint, spec watchSpec) ([]*watchConn, error) {
	var out []*watchConn
	for _, ep := range eps {
		wc, err := openWatch(ctx, ep, spec)
		if err != nil {
			for _, c := range out {
				c.conn.Close()
			}
			return nil, err
		}
		out = append(out, wc)
	}
	return out, nil
}

// notificationsOff says why keyspace notifications cannot serve ("" they
// can): they must be on for keyspace events (K) of every kind a record
// goes through (A, or generic, string, hash, expired and evicted).
func (f *Follower) notificationsOff(ctx context.Context) string {
	v, err := f.c.ConfigGet(ctx, "notify-keyspace-events").Result()
	if err != nil {
		return fmt.Sprintf("notifications cannot be checked (CONFIG GET: %v)", err)
	}
	flags := v["notify-keyspace-events"]
	need := "g$hxe"
	if strings.Contains(flags, "A") {
		need = ""
	}
	for _, c := range "K" + need {
		if !strings.ContainsRune(flags, c) {
			return fmt.Sprintf("notifications are off (notify-keyspace-events is %q, following needs K and A)", flags)
		}
	}
	return ""
}

// watch keeps one primary's watch connection open: each time it ends,
// the view may have missed changes (said first), and it is reopened with
// a backoff; the re-sync waits until it is. A cluster node that is no
// longer a primary is given up: the primaries are discovered again.
func (f *Follower) watch(ctx context.Context, ep endpoint, wc *watchConn) {
	defer f.wg.Done()
	for {
		err := wc.run(ctx, f.pend)
		if ctx.Err() != nil {
			return
		}
		f.down.Add(1)
		f.pend.missed(ep.addr, "watch connection lost: "+errText(err))
		wait := 100 * time.Millisecond
		for {
			if errors.Is(err, errNotPrimary) && f.cluster() {
				f.forget(ep.addr)
				return
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(wait):
			}
			if wc, err = openWatch(ctx, ep, f.spec); err == nil {
				break
			}
			wait = min(wait*2, 5*time.Second)
		}
		f.down.Add(-1)
		f.pend.missed(ep.addr, "watch connection re-established")
	}
}

func errText(err error) string {
	if err == nil {
		return "closed"
	}
	return err.Error()
}

// Prefixes is what to watch: each keyspace's literal prefix (its match
// pattern up to the first wildcard), without those another one covers.
// why is set when a keyspace has none: following every key of the
// server would cost it too much.
func Prefixes(kss []*inspect.Keyspace) (prefixes []string, why string) {
	for _, ks := range kss {
		p := literalPrefix(ks.Match)
		if p == "" {
			return nil, fmt.Sprintf("keyspace %s's pattern %q has no literal prefix: following every key would cost the server too much", ks.Name, ks.Match)
		}
		prefixes = append(prefixes, p)
		if lp := lockPrefix(ks, p); lp != "" {
			prefixes = append(prefixes, lp)
		}
	}
	sort.Strings(prefixes)
	var out []string
	for _, p := range prefixes {
		if len(out) > 0 && strings.HasPrefix(p, out[len(out)-1]) {
			continue // covered (and Redis refuses overlapping prefixes)
		}
		out = append(out, p)
	}
	return out, ""
}

// literalPrefix is pattern up to its first glob metacharacter.
func literalPrefix(pattern string) string {
	if i := strings.IndexAny(pattern, `*?[\`); i >= 0 {
		return pattern[:i]
	}
	return pattern
}
