package redisconn

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
)

// DefaultURL is where a command connects when nothing names a server.
const DefaultURL = "redis://127.0.0.1:6379/0"

// Endpoint is a resolved connection target; String never shows a secret.
type Endpoint struct {
	Scheme   string
	Addr     string // host:port
	DB       int
	User     string
	Password string
	TLS      bool
}

func (e Endpoint) String() string {
	u := e.Scheme + "://"
	if e.User != "" {
		u += url.User(e.User).String() + "@"
	}
	return u + e.Addr + "/" + strconv.Itoa(e.DB)
}

// ParseURL reads a redis:// or rediss:// URL, or a bare address
// (host:port, [::1]:6379, localhost) as redis://. The error never repeats
// the URL, which may hold a password.
func ParseURL(raw string) (Endpoint, error) {
	u, err := url.Parse(withScheme(raw))
	if err != nil {
		msg := redactURLError(err)
		if port, ok := strings.CutPrefix(msg, `invalid port ":`); ok && !strings.Contains(raw, "@") {
			msg = fmt.Sprintf("port %q is not a number", strings.TrimSuffix(port, `" after host`))
		}
		if strings.Contains(raw, "@") {
			// A password with an unencoded '/', '#', '?' or '%' ends up
			// quoted as a port or an escape: invalid port ":s3cr" after host.
			msg = redactQuoted(msg) + passwordHint(raw)
		}
		return Endpoint{}, inputErr("bad --url: " + msg)
	}
	e := Endpoint{Scheme: u.Scheme}
	switch u.Scheme {
	case "redis":
	case "rediss":
		e.TLS = true
	default:
		return Endpoint{}, inputErr(fmt.Sprintf("bad --url: scheme must be redis:// or rediss://, not %q", u.Scheme))
	}
	host, port := u.Hostname(), u.Port()
	if host == "" {
		host = "127.0.0.1"
	}
	if port == "" {
		port = "6379"
	}
	if _, err := strconv.ParseUint(port, 10, 16); err != nil {
		if strings.Contains(raw, "@") { // the "port" may be the head of a password
			return Endpoint{}, inputErr("bad --url: the port is not a number" + passwordHint(raw))
		}
		return Endpoint{}, inputErr(fmt.Sprintf("bad --url: port %q is not a number", port))
	}
	e.Addr = net.JoinHostPort(host, port)
	if p := strings.Trim(u.Path, "/"); p != "" {
		db, err := strconv.Atoi(p)
		if err != nil || db < 0 {
			if u.User != nil || strings.Contains(p, "@") { // the path may be the tail of a password
				return Endpoint{}, inputErr("bad --url: the database (the URL's path) is not a number" + passwordHint(raw))
			}
			return Endpoint{}, inputErr(fmt.Sprintf("bad --url: database %q is not a number", p))
		}
		e.DB = db
	}
	if u.User != nil {
		e.User = u.User.Username()
		e.Password, _ = u.User.Password()
	}
	return e, nil
}

// withScheme reads an address without "://" as a plaintext redis:// URL:
// operators paste host:port from redis-cli -h/-p or a compose file, and
// url.Parse would take "redis:6379" for a scheme and an opaque rest.
func withScheme(raw string) string {
	if strings.Contains(raw, "://") {
		return raw
	}
	if ip := net.ParseIP(raw); ip != nil && ip.To4() == nil {
		raw = "[" + raw + "]" // a bare IPv6 address: its colons are not a port
	}
	return "redis://" + raw
}

// redactURLError strips the URL out of a net/url error.
func redactURLError(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err.Error()
	}
	return "malformed URL"
}

// redactQuoted replaces each Go-quoted string in msg with ‹redacted›.
func redactQuoted(msg string) string {
	var b strings.Builder
	for {
		i := strings.IndexByte(msg, '"')
		if i < 0 {
			return b.String() + msg
		}
		b.WriteString(msg[:i] + "‹redacted›")
		q, err := strconv.QuotedPrefix(msg[i:])
		if err != nil {
			return b.String()
		}
		msg = msg[i+len(q):]
	}
}

// passwordHint explains a malformed URL that may hold a password.
func passwordHint(raw string) string {
	if !strings.Contains(raw, "@") {
		return ""
	}
	return " (percent-encode special characters in a URL's password, or better, use --password-env or --password-file)"
}

// Host is addr's host part (addr itself when it has no port).
func Host(addr string) string {
	h, _, err := net.SplitHostPort(addr)
	if err != nil {
		return addr
	}
	return h
}

// IsLoopback reports whether an address resolves only to loopback IPs.
func IsLoopback(addr string) bool {
	host := Host(addr)
	if host == "localhost" {
		return true
	}
	ips, err := net.LookupIP(host)
	if err != nil || len(ips) == 0 {
		return false
	}
	for _, ip := range ips {
		if !ip.IsLoopback() {
			return false
		}
	}
	return true
}
