package redisconn

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"
	"time"
)

// diagnose explains a failed connection in one line with a hint. A
// rediss:// URL for a plaintext port, or redis:// for a TLS-only one, fails
// as a timeout or a closed connection; a second, bounded look at the port
// tells which, so the message can name the scheme to use.
func diagnose(ctx context.Context, o Options, err error) error {
	ep := o.Endpoint
	msg := err.Error()
	if ep.Password != "" {
		msg = strings.ReplaceAll(msg, ep.Password, "***")
	}
	hint := ""
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		msg, hint = "connection refused", "is redis-server running there? check --url"
	case ep.TLS && handshakeFailed(err):
		connected, plain := probePlain(ctx, ep.Addr, probeTimeout(o.DialTimeout))
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
	case !ep.TLS && closedEarly(err) && probeTLS(ctx, ep.Addr, probeTimeout(o.DialTimeout)):
		msg, hint = "the server closed the connection: it speaks only TLS", "use rediss:// instead of redis:// (with --tls-ca to verify it)"
	case errors.Is(err, context.DeadlineExceeded) || isTimeout(err):
		msg, hint = "timed out", "check --url, firewalls, or raise --dial-timeout"
	case strings.HasPrefix(msg, "WRONGPASS") || strings.Contains(msg, "invalid username-password"):
		hint = "check --user and --password-env/--password-file"
	case strings.HasPrefix(msg, "NOAUTH"):
		hint = "the server needs a password: use --password-env or --password-file"
	case strings.HasPrefix(msg, "NOPERM"):
		hint = "the ACL user may not run PING; see the ACL roles, docs/acl-roles.md"
	case strings.Contains(msg, "certificate") || strings.Contains(msg, "tls:"):
		hint = "check --tls-ca (or, for a lab only, --tls-insecure)"
	case strings.Contains(msg, "no such host"):
		hint = "check the host name in --url"
	}
	out := fmt.Sprintf("cannot connect to Redis at %s: %s", ep.Addr, msg)
	if strings.Contains(msg, "CLUSTERDOWN") || strings.Contains(msg, "cluster support disabled") {
		hint = "is this a cluster? --cluster expects cluster-enabled servers"
	}
	if ep.User != "" {
		out += fmt.Sprintf(" (user %s)", ep.User)
	}
	if hint != "" {
		out += " — " + hint
	}
	return connectErr(out)
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
