package doctor

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/redis/go-redis/v9"

	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/internal/units"
)

// Server is what one read-only pass learned about the server: INFO (which
// managed services and read-only ACL roles usually allow) and the few
// CONFIG parameters no INFO field carries (often refused: then ConfigErr
// says why, and the rules that need them say so instead of guessing).
type Server struct {
	Addr      string
	Info      map[string]string // every "field:value" line of INFO, flattened
	InfoErr   error
	Config    map[string]string // CONFIG GET results that were allowed
	ConfigErr error             // why CONFIG GET was refused, when it was
	// ConfigRefused: the server answered CONFIG GET with an error (ACL,
	// renamed command), not a network failure: asking again won't help.
	ConfigRefused bool
}

// errNoServer is why the server rules do not run on a snapshot.
var errNoServer = errors.New("a snapshot holds no server settings (INFO, CONFIG): run doctor with --url for the server rules")

// SnapshotServer stands for the server when the records come from a
// snapshot: no INFO, no CONFIG, and the rules that need them say why.
func SnapshotServer(name string) Server {
	return Server{Addr: name, InfoErr: errNoServer, Config: map[string]string{}, ConfigErr: errNoServer, ConfigRefused: true}
}

// configParams are the CONFIG parameters the rules read.
var configParams = []string{"save", "appendonly", "appendfsync", "replica-read-only", "maxmemory-policy"}

// ReadServer runs INFO, and CONFIG GET when withConfig, on one server. A
// cluster is read through one primary (the first by address). Without
// CONFIG (a caller that was refused it before, and would only fill the
// server's ACL LOG every minute), ConfigErr says it was not asked.
func ReadServer(ctx context.Context, c redis.UniversalClient, withConfig bool) Server {
	s := Server{Addr: addrOf(c)}
	if cc, ok := c.(*redis.ClusterClient); ok {
		var first *redis.Client
		var mu sync.Mutex // ForEachMaster calls back concurrently
		_ = cc.ForEachMaster(ctx, func(_ context.Context, n *redis.Client) error {
			mu.Lock()
			defer mu.Unlock()
			if first == nil || n.Options().Addr < first.Options().Addr {
				first = n
			}
			return nil
		})
		if first != nil {
			c, s.Addr = first, first.Options().Addr
		}
	}
	raw, err := c.Info(ctx).Result() // the default sections hold every field the rules read, on every version
	if err != nil {
		s.InfoErr = refusal("INFO", err)
	} else {
		s.Info = parseInfo(raw)
	}
	s.Config = map[string]string{}
	if !withConfig {
		s.ConfigErr = errors.New("CONFIG GET was refused on an earlier scan: not asked again")
		return s
	}
	for _, p := range configParams {
		m, err := c.ConfigGet(ctx, p).Result()
		if err != nil {
			var re redis.Error
			s.ConfigErr, s.ConfigRefused = refusal("CONFIG GET", err), errors.As(err, &re)
			break
		}
		for k, v := range m {
			s.Config[strings.ToLower(k)] = v
		}
	}
	return s
}

func addrOf(c redis.UniversalClient) string {
	if cl, ok := c.(*redis.Client); ok {
		return cl.Options().Addr
	}
	return "server"
}

// refusal words a failed command for a finding: an ACL refusal names the
// right to grant; anything else is quoted, sanitized, on one line.
func refusal(cmd string, err error) error {
	msg := inspect.Sanitize(units.OneLine(err.Error()))
	var re redis.Error
	if errors.As(err, &re) && strings.HasPrefix(msg, "NOPERM") {
		return fmt.Errorf("%s refused by the ACL (%s): grant it to idemctl's user (ACL SETUSER <user> +%s)", cmd, msg,
			strings.ToLower(strings.ReplaceAll(cmd, " ", "|")))
	}
	if strings.Contains(msg, "unknown command") {
		return fmt.Errorf("%s is not available on this server (%s; managed services often rename or disable it)", cmd, msg)
	}
	return fmt.Errorf("%s failed: %s", cmd, msg)
}

func parseInfo(raw string) map[string]string {
	m := map[string]string{}
	for _, line := range strings.Split(raw, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' {
			continue
		}
		if k, v, ok := strings.Cut(line, ":"); ok {
			m[k] = v
		}
	}
	return m
}

// infoInt reads an integer INFO field; ok is false when absent or garbled.
func (s *Server) infoInt(field string) (int64, bool) {
	v, ok := s.Info[field]
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(v, 10, 64)
	return n, err == nil
}

// setting reads a server setting from CONFIG when allowed, else from the
// INFO field that mirrors it (infoField, "" when none). ok is false when
// neither could be read.
func (s *Server) setting(param, infoField string) (string, bool) {
	if v, ok := s.Config[param]; ok {
		return v, true
	}
	if infoField != "" {
		if v, ok := s.Info[infoField]; ok {
			return v, true
		}
	}
	return "", false
}

// keyspaceField sums one field (keys, expires, subexpiry) of INFO keyspace's
// "dbN:keys=…,expires=…" lines.
func (s *Server) keyspaceField(name string) (int64, bool) {
	var total int64
	found := false
	for k, v := range s.Info {
		if !strings.HasPrefix(k, "db") {
			continue
		}
		for _, kv := range strings.Split(v, ",") {
			if f, val, ok := strings.Cut(kv, "="); ok && f == name {
				if n, err := strconv.ParseInt(val, 10, 64); err == nil {
					total += n
					found = true
				}
			}
		}
	}
	return total, found
}
