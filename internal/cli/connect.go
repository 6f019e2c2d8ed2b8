package cli

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"
	"github.com/spf13/pflag"

	"github.com/idemctl/idemctl/internal/safefile"
)

// connFlags are the connection flags every Redis-facing command takes.
type connFlags struct {
	url            string
	user           string
	passwordEnv    string
	passwordFile   string
	passwordPrompt bool
	tlsCA          string
	tlsInsecure    bool
	dialTimeout    time.Duration
	readTimeout    time.Duration
	configPath     string
	profile        string
	cluster        bool
	addrs          []string
	sentinel       string
	sentinelPwEn   string
	replicas       bool
}

const defaultURL = "redis://127.0.0.1:6379/0"

func (c *connFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&c.url, "url", "", "Redis URL: redis://[user@]host:port/db, rediss:// for TLS, or host:port (default "+defaultURL+")")
	fs.StringVar(&c.user, "user", "", "Redis ACL user (overrides the URL's)")
	fs.StringVar(&c.passwordEnv, "password-env", "", "read the password from this environment variable")
	fs.StringVar(&c.passwordFile, "password-file", "", "read the password from this file (first line)")
	fs.BoolVar(&c.passwordPrompt, "password-prompt", false, "ask for the password on the terminal (not echoed)")
	fs.StringVar(&c.tlsCA, "tls-ca", "", "PEM file of CA certificates to verify the server with")
	fs.BoolVar(&c.tlsInsecure, "tls-insecure", false, "do not verify the server's TLS certificate (dangerous)")
	c.dialTimeout, c.readTimeout = 5*time.Second, 5*time.Second
	fs.Var(durationValue{&c.dialTimeout}, "dial-timeout", "connect timeout")
	fs.Var(durationValue{&c.readTimeout}, "read-timeout", "read/write timeout per command or pipeline")
	fs.BoolVar(&c.cluster, "cluster", false, "Redis Cluster: --url (and --addrs) are seed nodes; every primary is scanned")
	fs.StringSliceVar(&c.addrs, "addrs", nil, "more seed nodes (cluster) or sentinel addresses, host:port")
	fs.StringVar(&c.sentinel, "sentinel-master", "", "Sentinel: the master's name; --url (and --addrs) are sentinels")
	fs.StringVar(&c.sentinelPwEn, "sentinel-password-env", "", "read the sentinels' password from this environment variable")
	fs.BoolVar(&c.replicas, "read-from-replicas", false, "scan replicas (one per shard) to spare the primaries; writes still go to primaries")
	fs.StringVar(&c.configPath, "config", "", "config file (default $XDG_CONFIG_HOME/idemctl/config.yaml)")
	fs.StringVar(&c.profile, "profile", "", "profile from the config file")
}

// endpoint is a resolved connection target; String never shows a secret.
type endpoint struct {
	scheme   string
	addr     string
	db       int
	user     string
	password string
	tls      bool
}

func (e endpoint) String() string {
	u := e.scheme + "://"
	if e.user != "" {
		u += url.User(e.user).String() + "@"
	}
	return u + e.addr + "/" + strconv.Itoa(e.db)
}

// parseURL reads a redis:// or rediss:// URL, or a bare address
// (host:port, [::1]:6379, localhost) as redis://. The error never repeats
// the URL, which may hold a password.
func parseURL(raw string) (endpoint, error) {
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
		return endpoint{}, fmt.Errorf("bad --url: %s", msg)
	}
	e := endpoint{scheme: u.Scheme}
	switch u.Scheme {
	case "redis":
	case "rediss":
		e.tls = true
	default:
		return endpoint{}, fmt.Errorf("bad --url: scheme must be redis:// or rediss://, not %q", u.Scheme)
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
			return endpoint{}, fmt.Errorf("bad --url: the port is not a number%s", passwordHint(raw))
		}
		return endpoint{}, fmt.Errorf("bad --url: port %q is not a number", port)
	}
	e.addr = net.JoinHostPort(host, port)
	if p := strings.Trim(u.Path, "/"); p != "" {
		db, err := strconv.Atoi(p)
		if err != nil || db < 0 {
			if u.User != nil || strings.Contains(p, "@") { // the path may be the tail of a password
				return endpoint{}, fmt.Errorf("bad --url: the database (the URL's path) is not a number%s", passwordHint(raw))
			}
			return endpoint{}, fmt.Errorf("bad --url: database %q is not a number", p)
		}
		e.db = db
	}
	if u.User != nil {
		e.user = u.User.Username()
		e.password, _ = u.User.Password()
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

// readPassword takes the password from a file or an environment variable.
func readPassword(envName, file string, getenv func(string) string) (string, error) {
	switch {
	case envName != "" && file != "":
		return "", usageErr("use --password-env or --password-file, not both")
	case envName != "":
		v := getenv(envName)
		if v == "" {
			return "", usageErr("--password-env %s: the variable is empty or unset", envName)
		}
		return v, nil
	case file != "":
		data, err := safefile.Read(file, safefile.MaxPassword)
		if err != nil {
			return "", usageErr("--password-file %v", err)
		}
		line, _, _ := strings.Cut(string(data), "\n")
		return strings.TrimRight(line, "\r"), nil
	}
	return "", nil
}

type clientOpts struct {
	ep          endpoint
	mode        string   // standalone, cluster or sentinel
	seeds       []string // more cluster seeds or sentinel addresses
	master      string   // sentinel master name
	sentinelPw  string
	tlsCA       string
	tlsInsecure bool
	dialTimeout time.Duration
	readTimeout time.Duration
	poolSize    int
}

// newClient builds the UniversalClient and checks it with PING.
func newClient(ctx context.Context, o clientOpts, warn io.Writer) (redis.UniversalClient, error) {
	opts := &redis.UniversalOptions{
		Addrs:                    append([]string{o.ep.addr}, o.seeds...),
		DB:                       o.ep.db,
		Username:                 o.ep.user,
		Password:                 o.ep.password,
		DialTimeout:              o.dialTimeout,
		ReadTimeout:              o.readTimeout,
		WriteTimeout:             o.readTimeout,
		PoolSize:                 max(o.poolSize, 4),
		MaxRetries:               1,
		DisableIdentity:          true, // no CLIENT SETINFO: one less command for least-privilege users
		MaintNotificationsConfig: &maintnotifications.Config{Mode: maintnotifications.ModeDisabled},
	}
	switch o.mode {
	case "cluster":
		if o.ep.db != 0 {
			return nil, usageErr("Redis Cluster has only database 0; drop /%d from --url", o.ep.db)
		}
		opts.IsClusterMode = true
	case "sentinel":
		if o.master == "" {
			return nil, usageErr("sentinel mode needs the master's name (--sentinel-master)")
		}
		opts.MasterName, opts.SentinelPassword = o.master, o.sentinelPw
		opts.SentinelUsername = ""
	}
	if o.ep.tls {
		tc := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: hostOf(o.ep.addr)}
		if o.tlsCA != "" {
			pem, err := safefile.Read(o.tlsCA, safefile.MaxPEM)
			if err != nil {
				return nil, usageErr("--tls-ca %v", err)
			}
			pool := x509.NewCertPool()
			if !pool.AppendCertsFromPEM(pem) {
				return nil, usageErr("--tls-ca %s: no PEM certificates found", o.tlsCA)
			}
			tc.RootCAs = pool
		}
		if o.tlsInsecure {
			tc.InsecureSkipVerify = true
			fmt.Fprintln(warn, "idemctl: WARNING: --tls-insecure: the server's certificate is NOT verified; anyone on the path can read and change this session")
		}
		opts.TLSConfig = tc
	} else if o.tlsCA != "" || o.tlsInsecure {
		return nil, usageErr("--tls-ca/--tls-insecure need a rediss:// URL")
	}
	c := redis.NewUniversalClient(opts)
	pctx, cancel := context.WithTimeout(ctx, o.dialTimeout+o.readTimeout)
	defer cancel()
	if err := c.Ping(pctx).Err(); err != nil {
		c.Close()
		return nil, connectError(ctx, o, err)
	}
	return c, nil
}

func hostOf(addr string) string {
	h, _, err := net.SplitHostPort(addr)
	if err != nil {
		return addr
	}
	return h
}

// connectError explains a failed connection in one line with a hint. A
// rediss:// URL for a plaintext port, or redis:// for a TLS-only one, fails
// as a timeout or a closed connection; a second, bounded look at the port
// tells which, so the message can name the scheme to use.
func connectError(ctx context.Context, o clientOpts, err error) error {
	ep := o.ep
	msg := err.Error()
	if ep.password != "" {
		msg = strings.ReplaceAll(msg, ep.password, "***")
	}
	hint := ""
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		msg, hint = "connection refused", "is redis-server running there? check --url"
	case ep.tls && handshakeFailed(err):
		connected, plain := probePlain(ctx, ep.addr, probeTimeout(o.dialTimeout))
		switch {
		case plain:
			msg, hint = "the server did not answer the TLS handshake: it speaks plain Redis, not TLS", "use redis:// instead of rediss://"
		case errors.As(err, new(tls.RecordHeaderError)):
			msg, hint = "the server's answer to the TLS handshake is not TLS", "use redis:// for a plaintext port"
		case connected && isTimeout(err):
			msg, hint = "the server did not answer the TLS handshake", "it may not speak TLS (use redis:// for a plaintext port), or raise --dial-timeout"
		case isTimeout(err):
			msg, hint = "timed out", "check --url, firewalls, or raise --dial-timeout"
		}
	case !ep.tls && closedEarly(err) && probeTLS(ctx, ep.addr, probeTimeout(o.dialTimeout)):
		msg, hint = "the server closed the connection: it speaks only TLS", "use rediss:// instead of redis:// (with --tls-ca to verify it)"
	case errors.Is(err, context.DeadlineExceeded) || isTimeout(err):
		msg, hint = "timed out", "check --url, firewalls, or raise --dial-timeout"
	case strings.HasPrefix(msg, "WRONGPASS") || strings.Contains(msg, "invalid username-password"):
		hint = "check --user and --password-env/--password-file"
	case strings.HasPrefix(msg, "NOAUTH"):
		hint = "the server needs a password: use --password-env or --password-file"
	case strings.HasPrefix(msg, "NOPERM"):
		hint = "the ACL user may not run PING; see the README's ACL roles"
	case strings.Contains(msg, "certificate") || strings.Contains(msg, "tls:"):
		hint = "check --tls-ca (or, for a lab only, --tls-insecure)"
	case strings.Contains(msg, "no such host"):
		hint = "check the host name in --url"
	}
	out := fmt.Sprintf("cannot connect to Redis at %s: %s", ep.addr, msg)
	if strings.Contains(msg, "CLUSTERDOWN") || strings.Contains(msg, "cluster support disabled") {
		hint = "is this a cluster? --cluster expects cluster-enabled servers"
	}
	if ep.user != "" {
		out += fmt.Sprintf(" (user %s)", ep.user)
	}
	if hint != "" {
		out += " — " + hint
	}
	return &exitErr{code: exitError, msg: out}
}

// handshakeFailed reports an error a TLS handshake with a plaintext server
// ends in: no answer (the server waits for a line that never ends), a
// reply that is no TLS record, or a hang-up.
func handshakeFailed(err error) bool {
	var rec tls.RecordHeaderError
	return isTimeout(err) || errors.Is(err, context.DeadlineExceeded) || errors.As(err, &rec) || closedEarly(err)
}

// closedEarly reports a connection the server ended before any reply: what
// a TLS listener does with a plaintext command.
func closedEarly(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}

// probeTimeout bounds the second look: a server answers it at once, and a
// host that does not should not double the wait.
func probeTimeout(dial time.Duration) time.Duration {
	if dial <= 0 || dial > time.Second {
		return time.Second
	}
	return dial
}

// probePlain connects to addr without TLS and sends a PING: connected says
// the port accepts connections, plain that it answered in Redis's protocol.
// The PING carries no credentials.
func probePlain(ctx context.Context, addr string, timeout time.Duration) (connected, plain bool) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	c, err := (&net.Dialer{}).DialContext(ctx, "tcp", addr)
	if err != nil {
		return false, false
	}
	defer c.Close()
	deadline, _ := ctx.Deadline()
	c.SetDeadline(deadline)
	if _, err := io.WriteString(c, "PING\r\n"); err != nil {
		return true, false
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	return true, err == nil && (strings.HasPrefix(line, "+") || strings.HasPrefix(line, "-"))
}

// probeTLS reports whether addr completes a TLS handshake. The certificate
// is not checked and nothing is sent: this only learns the port's protocol.
func probeTLS(ctx context.Context, addr string, timeout time.Duration) bool {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	d := &tls.Dialer{Config: &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: true}}
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return false
	}
	c.Close()
	return true
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// isLoopback reports whether an address resolves only to loopback IPs.
func isLoopback(addr string) bool {
	host := hostOf(addr)
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
