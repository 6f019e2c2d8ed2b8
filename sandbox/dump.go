package sandbox

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"strconv"
	"strings"

	"github.com/alicebob/miniredis/v2"
	"github.com/alicebob/miniredis/v2/server"
)

// The embedded server's DUMP serializes strings only and its RESTORE makes
// every payload a string, so a hash record's before-image could not be
// taken and an undo could not be tried in the demo. The sandbox answers
// DUMP and RESTORE of hashes itself, in a payload of its own that only
// this server reads back: the undo then runs the same compare-and-set
// script it runs on a real server. Strings keep miniredis' own round trip.

// dumpMagic starts every payload the sandbox writes.
const dumpMagic = "\x00idemctl-sandbox-hash\x00"

// serveHashDumps installs the DUMP and RESTORE of hashes on srv.
func serveHashDumps(srv *miniredis.Miniredis) {
	s := srv.Server()
	s.SetPreHook(func(c *server.Peer, cmd string, args ...string) bool {
		switch cmd {
		case "DUMP":
			return dumpHash(s, c, args)
		case "RESTORE":
			return restoreHash(s, c, args)
		}
		return false
	})
}

// call runs one command on the server as c would (inside a script it
// runs under the script's lock, outside it takes its own) and parses the
// reply.
func call(s *server.Server, c *server.Peer, args ...string) (any, error) {
	var buf bytes.Buffer
	w := bufio.NewWriter(&buf)
	p := server.NewPeer(w)
	p.Ctx = c.Ctx
	s.Dispatch(p, args)
	w.Flush()
	return server.ParseReply(bufio.NewReader(&buf))
}

// dumpHash answers DUMP of a hash; any other key is left to miniredis.
func dumpHash(s *server.Server, c *server.Peer, args []string) bool {
	if len(args) != 1 {
		return false
	}
	if t, err := call(s, c, "TYPE", args[0]); err != nil || t != server.Simple("hash") {
		return false
	}
	all, err := call(s, c, "HGETALL", args[0])
	if err != nil {
		c.WriteError(err.Error())
		return true
	}
	fields, _ := all.([]any)
	c.WriteBulk(encodeHash(fields))
	return true
}

// encodeHash writes the magic, then each field and value as a length and
// its bytes.
func encodeHash(fields []any) string {
	var b strings.Builder
	b.WriteString(dumpMagic)
	var n [binary.MaxVarintLen64]byte
	for _, f := range fields {
		s, _ := f.(string)
		b.Write(n[:binary.PutUvarint(n[:], uint64(len(s)))])
		b.WriteString(s)
	}
	return b.String()
}

// decodeHash reads encodeHash's payload back into HSET's arguments.
func decodeHash(p string) ([]string, error) {
	rest := []byte(strings.TrimPrefix(p, dumpMagic))
	var out []string
	for len(rest) > 0 {
		l, n := binary.Uvarint(rest)
		if n <= 0 || uint64(len(rest)-n) < l {
			return nil, errors.New("ERR DUMP payload version or checksum are wrong")
		}
		out = append(out, string(rest[n:n+int(l)]))
		rest = rest[n+int(l):]
	}
	if len(out) == 0 || len(out)%2 != 0 {
		return nil, errors.New("ERR DUMP payload version or checksum are wrong")
	}
	return out, nil
}

// restoreHash answers RESTORE key ttl payload [REPLACE] [ABSTTL] of a
// payload dumpHash wrote; any other payload is left to miniredis.
func restoreHash(s *server.Server, c *server.Peer, args []string) bool {
	if len(args) < 3 || !strings.HasPrefix(args[2], dumpMagic) {
		return false
	}
	key, replace, abs := args[0], false, false
	for _, o := range args[3:] {
		switch strings.ToUpper(o) {
		case "REPLACE":
			replace = true
		case "ABSTTL":
			abs = true
		default:
			c.WriteError("ERR syntax error")
			return true
		}
	}
	ttl, err := strconv.ParseInt(args[1], 10, 64)
	fields, derr := decodeHash(args[2])
	switch {
	case err != nil || ttl < 0:
		c.WriteError("ERR Invalid TTL value, must be >= 0")
		return true
	case derr != nil:
		c.WriteError(derr.Error())
		return true
	}
	if n, _ := call(s, c, "EXISTS", key); n != 0 && !replace {
		c.WriteError("BUSYKEY Target key name already exists.")
		return true
	}
	steps := [][]string{{"DEL", key}, append([]string{"HSET", key}, fields...)}
	switch {
	case ttl > 0 && abs:
		steps = append(steps, []string{"PEXPIREAT", key, args[1]})
	case ttl > 0:
		steps = append(steps, []string{"PEXPIRE", key, args[1]})
	}
	for _, st := range steps {
		if _, err := call(s, c, st...); err != nil {
			c.WriteError(err.Error())
			return true
		}
	}
	c.WriteOK()
	return true
}
