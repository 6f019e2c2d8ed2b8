package doctor

import (
	"fmt"
	"strings"
	"time"

	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/internal/units"
)

// The server rules: settings and topology that lose or double records
// whatever the application does (eviction, persistence, replicas, slots).

func ruleEviction(in *input, rep *Report) {
	s := in.srv
	if s.InfoErr != nil {
		rep.check("eviction", "", StatusSkipped, s.InfoErr.Error())
		return
	}
	policy, ok := s.setting("maxmemory-policy", "maxmemory_policy")
	if !ok {
		rep.check("eviction", "", StatusSkipped, "neither INFO memory (maxmemory_policy) nor CONFIG GET maxmemory-policy answered")
		return
	}
	maxmem, _ := s.infoInt("maxmemory")
	evicted, _ := s.infoInt("evicted_keys")
	var withTTL int64
	for _, o := range in.obs.ks {
		withTTL += o.withTTL
	}
	figs := map[string]int64{"maxmemory_bytes": maxmem, "evicted_keys": evicted, "records_with_ttl": withTTL}
	ev := []string{fmt.Sprintf("maxmemory-policy %s, maxmemory %s, evicted_keys %s since the server started (INFO)",
		inspect.Sanitize(policy), limitText(maxmem), count(evicted))}
	fix := "CONFIG SET maxmemory-policy noeviction and the same line in redis.conf (maxmemory-policy noeviction; on a managed service, its parameter group); keep idempotency records off a server that caches with eviction"
	sev, title := Info, ""
	switch {
	case policy == "noeviction":
		if evicted == 0 {
			rep.check("eviction", "", StatusOK, "")
			return
		}
		sev, title = Warning, "keys were evicted under an earlier policy: idempotency records may have been among them"
	case strings.HasPrefix(policy, "allkeys-"):
		sev, title = Critical, "the eviction policy can delete any key, idempotency records included: a retried payment then runs twice"
		if maxmem == 0 && evicted == 0 {
			sev, title = Warning, "the eviction policy would delete any key, idempotency records included, once a maxmemory is set"
		}
	case strings.HasPrefix(policy, "volatile-"):
		if withTTL == 0 && evicted == 0 {
			rep.check("eviction", "", StatusOK, "volatile-* evicts only keys with a TTL, and no record has one")
			return
		}
		sev, title = Critical, "the eviction policy deletes keys with a TTL, which idempotency records have: a retried request then runs twice"
		if maxmem == 0 && evicted == 0 {
			sev, title = Warning, "the eviction policy would delete keys with a TTL, idempotency records included, once a maxmemory is set"
		}
	default:
		sev, title = Warning, "unknown maxmemory-policy: records may be evicted"
	}
	if evicted > 0 {
		sev = Critical
		ev = append(ev, fmt.Sprintf("%s keys have already been evicted", count(evicted)))
	}
	rep.add(Finding{Rule: "eviction", Severity: sev, Title: title, Evidence: ev, Figures: figs, Fix: fix})
}

func limitText(maxmem int64) string {
	if maxmem == 0 {
		return "0 (no limit)"
	}
	return units.FormatBytes(maxmem)
}

var fsyncRank = map[string]int{"no": 0, "everysec": 1, "always": 2}

func rulePersistence(in *input, rep *Report) {
	s := in.srv
	if s.InfoErr != nil {
		rep.check("persistence", "", StatusSkipped, s.InfoErr.Error())
		return
	}
	aof, ok := s.infoInt("aof_enabled")
	if !ok {
		rep.check("persistence", "", StatusSkipped, "INFO persistence has no aof_enabled field")
		return
	}
	fix := "CONFIG SET appendonly yes; CONFIG SET appendfsync " + in.opt.RequireFsync + "; CONFIG REWRITE (redis.conf: appendonly yes, appendfsync " + in.opt.RequireFsync + ")"
	if aof == 1 {
		fsync, ok := s.setting("appendfsync", "")
		if !ok {
			rep.check("persistence", "", StatusSkipped, "AOF is on, but appendfsync is unknown: "+errText(s.ConfigErr))
			return
		}
		if fsyncRank[fsync] >= fsyncRank[in.opt.RequireFsync] {
			rep.check("persistence", "", StatusOK, "")
			return
		}
		rep.add(Finding{Rule: "persistence", Severity: Warning,
			Title:    fmt.Sprintf("appendfsync %s is weaker than the required %s: a crash loses the records written since the last fsync", inspect.Sanitize(fsync), in.opt.RequireFsync),
			Evidence: []string{"aof_enabled 1 (INFO); appendfsync " + inspect.Sanitize(fsync) + " (CONFIG GET)"}, Fix: fix})
		return
	}
	save, ok := s.setting("save", "")
	if !ok {
		saves, _ := s.infoInt("rdb_changes_since_last_save")
		rep.check("persistence", "", StatusSkipped, fmt.Sprintf("AOF is off (INFO) and the RDB save points are unknown (%s); %s changes since the last save",
			errText(s.ConfigErr), count(saves)))
		return
	}
	if strings.TrimSpace(save) == "" {
		rep.add(Finding{Rule: "persistence", Severity: Critical,
			Title:    "persistence is off (no AOF, no RDB save points): a restart forgets every idempotency record, and every retry after it runs again",
			Evidence: []string{`aof_enabled 0 (INFO); save "" (CONFIG GET)`}, Fix: fix})
		return
	}
	rep.add(Finding{Rule: "persistence", Severity: Warning,
		Title:    "RDB snapshots only: a restart loses the records written since the last snapshot, and their retries run again",
		Evidence: []string{fmt.Sprintf("aof_enabled 0 (INFO); save %q (CONFIG GET)", inspect.Sanitize(save))}, Fix: fix})
}

func errText(err error) string {
	if err == nil {
		return "not read"
	}
	return err.Error()
}

func ruleReplica(in *input, rep *Report) {
	s := in.srv
	if s.InfoErr != nil {
		rep.check("replica", "", StatusSkipped, s.InfoErr.Error())
		return
	}
	role := s.Info["role"]
	found := false
	if role == "slave" {
		ro, ok := s.setting("replica-read-only", "")
		switch {
		case !ok:
			rep.check("replica", "", StatusSkipped, "connected to a replica; whether it accepts writes is unknown: "+errText(s.ConfigErr))
			return
		case ro == "no":
			found = true
			rep.add(Finding{Rule: "replica", Severity: Critical,
				Title: "writes can reach a replica (replica-read-only no): records written there are unseen by the primary and erased at the next resync",
				Evidence: []string{fmt.Sprintf("role slave of %s:%s (INFO); replica-read-only no (CONFIG GET)",
					inspect.Sanitize(s.Info["master_host"]), inspect.Sanitize(s.Info["master_port"]))},
				Fix: "CONFIG SET replica-read-only yes (redis.conf: replica-read-only yes) and point the application's writes at the primary"})
		}
		if lag, ok := s.infoInt("master_last_io_seconds_ago"); ok && time.Duration(lag)*time.Second > in.opt.MaxLag {
			found = true
			rep.add(Finding{Rule: "replica", Severity: Warning,
				Title:    "this replica lags its primary: what idemctl reads here is behind, and a failover to it loses the records written meanwhile",
				Evidence: []string{fmt.Sprintf("master_last_io_seconds_ago %d (INFO)", lag)}, Figures: map[string]int64{"lag_seconds": lag},
				Fix: "scan the primary; check the replica's network and load"})
		}
	}
	for k, v := range s.Info {
		if !strings.HasPrefix(k, "slave") || !strings.Contains(v, "lag=") {
			continue
		}
		var lag int64
		for _, kv := range strings.Split(v, ",") {
			if f, val, ok := strings.Cut(kv, "="); ok && f == "lag" {
				fmt.Sscan(val, &lag)
			}
		}
		if time.Duration(lag)*time.Second > in.opt.MaxLag {
			found = true
			rep.add(Finding{Rule: "replica", Severity: Warning,
				Title:    fmt.Sprintf("a replica lags %ds behind: a failover to it loses the idempotency records written in that window", lag),
				Evidence: []string{fmt.Sprintf("%s:%s (INFO replication)", k, inspect.Sanitize(v))}, Figures: map[string]int64{"lag_seconds": lag},
				Fix: "check the replica's network and load; with WAIT 1 <ms> after RESERVE and COMPLETE the application can make the write reach a replica before it answers"})
		}
	}
	if !found {
		rep.check("replica", "", StatusOK, "role "+inspect.Sanitize(role))
	}
}

// ruleClusterSlots: a keyspace whose keys sit on one node of a cluster
// (a hash tag around the principal, e.g. {customer-42}) makes that node the
// hot spot for every request of it, and its failover the loss of all of it.
func ruleClusterSlots(in *input, v ksView, rep *Report) (string, string) {
	if len(v.nodes) < 2 {
		return StatusNoData, "not a cluster (or one primary): nothing to spread over"
	}
	var total, top int64
	topNode := ""
	for _, n := range v.nodes {
		total += n.Keys
		if n.Keys > top {
			top, topNode = n.Keys, n.Node
		}
	}
	if total < 100 {
		return StatusNoData, fmt.Sprintf("only %d keys: too few to judge their spread", total)
	}
	fair := total / int64(len(v.nodes))
	if top*10 < total*8 || top < 2*fair {
		return StatusOK, ""
	}
	ev := []string{fmt.Sprintf("%s of %s keys (%d%%) on %s (slots %s); %d primaries", count(top), count(total), top*100/total,
		inspect.Sanitize(topNode), slotsOf(v.nodes, topNode), len(v.nodes))}
	if v.rep != nil {
		for _, name := range v.rep.GroupOrder {
			if g := v.rep.Groups[name]; len(g.Top) > 0 {
				ev = append(ev, fmt.Sprintf("top %s: %s with %s records", inspect.Sanitize(name), inspect.Sanitize(string(g.Top[0].Value)), count(g.Top[0].Count)))
			}
		}
	}
	rep.add(Finding{Rule: "cluster-slots", Severity: Warning, Keyspace: v.ks.Name,
		Title:    "the keyspace is concentrated on one cluster node: that node takes every request of it, and its failover loses all of it",
		Evidence: ev, Figures: map[string]int64{"keys": total, "keys_on_busiest_node": top},
		Fix: "drop the hash tag ({…}) from the idempotency key, or tag by request rather than by principal, so keys spread over the slots"})
	return "", ""
}

func slotsOf(nodes []inspect.Coverage, addr string) string {
	for _, n := range nodes {
		if n.Node == addr {
			return n.Slots
		}
	}
	return "?"
}
