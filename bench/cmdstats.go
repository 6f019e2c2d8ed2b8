package main

import (
	"context"
	"strconv"
	"strings"
)

// CmdStat is one command's work on the server (INFO commandstats).
type CmdStat struct {
	Calls int64 `json:"calls"`
	Usec  int64 `json:"usec"`
}

// commandStats reads INFO commandstats.
func (h *harness) commandStats(ctx context.Context) map[string]CmdStat {
	info, err := h.client.Info(ctx, "commandstats").Result()
	out := map[string]CmdStat{}
	if err != nil {
		return out
	}
	for _, line := range strings.Split(info, "\n") {
		name, rest, ok := strings.Cut(strings.TrimSpace(line), ":")
		name, isCmd := strings.CutPrefix(name, "cmdstat_")
		if !ok || !isCmd {
			continue
		}
		var st CmdStat
		for _, kv := range strings.Split(rest, ",") {
			k, v, _ := strings.Cut(kv, "=")
			n, _ := strconv.ParseInt(v, 10, 64)
			switch k {
			case "calls":
				st.Calls = n
			case "usec":
				st.Usec = n
			}
		}
		out[name] = st
	}
	return out
}

// diffStats is the work done between two snapshots (the snapshots' own
// INFO calls left out).
func diffStats(after, before map[string]CmdStat) map[string]CmdStat {
	out := map[string]CmdStat{}
	for k, a := range after {
		b := before[k]
		if d := (CmdStat{a.Calls - b.Calls, a.Usec - b.Usec}); d.Calls > 0 && k != "info" {
			out[k] = d
		}
	}
	return out
}
