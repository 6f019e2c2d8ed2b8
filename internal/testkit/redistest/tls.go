package redistest

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"
)

// TLSHint is why a TLS test cannot run when redis-server lacks TLS.
const TLSHint = "this redis-server cannot serve TLS (built without BUILD_TLS=yes?): the TLS tests need one; " +
	"Debian/Ubuntu's `apt-get install -y redis-server` (7.0+) has it"

// CA is a certificate authority made up for one test.
type CA struct {
	Cert    *x509.Certificate
	Key     *ecdsa.PrivateKey
	PEM     []byte // the CA certificate, PEM-encoded
	PEMPath string // where PEM was written
}

// NewCA generates a self-signed ECDSA P-256 CA, valid for a day, and
// writes its certificate to dir/name.
func NewCA(dir, name string) (*CA, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: "idemctl test CA " + name},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	ca := &CA{Cert: cert, Key: key, PEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		PEMPath: filepath.Join(dir, name)}
	if err := os.WriteFile(ca.PEMPath, ca.PEM, 0o600); err != nil {
		return nil, err
	}
	return ca, nil
}

// Issue signs a server certificate for the given IP addresses and DNS
// names and writes it and its key (PEM) to certPath and keyPath.
func (ca *CA) Issue(certPath, keyPath string, ips []net.IP, dnsNames []string) error {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: "idemctl test server"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses:  ips,
		DNSNames:     dnsNames,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, &key.PublicKey, ca.Key)
	if err != nil {
		return err
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return err
	}
	if err := os.WriteFile(certPath, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		return err
	}
	return os.WriteFile(keyPath, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600)
}

func serial() *big.Int {
	n, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	return n.Add(n, big.NewInt(1))
}

// StartTLS starts a redis-server that speaks only TLS (--port 0) on a free
// loopback port, with a certificate for 127.0.0.1 issued by a CA generated
// for the test; clients need no certificate (--tls-auth-clients no).
// Server.Addr is the TLS port; caPEMPath is the CA to verify it with. A
// redis-server without TLS support fails the test with TLSHint. The server
// stops when the test ends. extra is appended to the command line.
func StartTLS(t testing.TB, extra ...string) (srv *Server, caPEMPath string) {
	t.Helper()
	bin, err := serverBinary()
	if err != nil {
		t.Fatal(err)
	}
	certDir := t.TempDir()
	ca, err := NewCA(certDir, "ca.pem")
	if err != nil {
		t.Fatalf("redistest.StartTLS: CA: %v", err)
	}
	crt, key := filepath.Join(certDir, "server.crt"), filepath.Join(certDir, "server.key")
	if err := ca.Issue(crt, key, []net.IP{net.IPv4(127, 0, 0, 1)}, nil); err != nil {
		t.Fatalf("redistest.StartTLS: server certificate: %v", err)
	}
	var last error
	for range 5 { // a free port can be taken between probe and bind
		port, err := FreePort()
		if err != nil {
			t.Fatal(err)
		}
		args := func(dir string) []string {
			return append([]string{
				"--port", "0", "--tls-port", strconv.Itoa(port), "--bind", "127.0.0.1",
				"--tls-cert-file", crt, "--tls-key-file", key, "--tls-ca-cert-file", ca.PEMPath,
				"--tls-auth-clients", "no",
				"--save", "", "--appendonly", "no", "--dir", dir,
				"--logfile", filepath.Join(dir, "redis.log"), "--daemonize", "no",
			}, extra...)
		}
		ready := func(s *Server) error { return tlsPing(s.Addr, ca.PEMPath) }
		s, err := launch(bin, port, args, ready, 10*time.Second)
		if err == nil {
			t.Cleanup(s.Stop)
			return s, ca.PEMPath
		}
		last = err
		if noTLS(err) {
			t.Fatalf("%s\n%v", TLSHint, err)
		}
	}
	t.Fatalf("redistest.StartTLS: %v", last)
	return nil, ""
}

// noTLS recognises a redis-server that rejects the TLS options.
func noTLS(err error) bool {
	s := strings.ToLower(err.Error())
	for _, m := range []string{"tls-port", "tls support", "failed to configure tls", "bad directive"} {
		if strings.Contains(s, m) {
			return true
		}
	}
	return false
}

// TLSClient returns a client for a TLS server, verified with the CA at
// caPEMPath.
func TLSClient(addr, caPEMPath string) (*redis.Client, error) {
	pemBytes, err := os.ReadFile(caPEMPath)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pemBytes) {
		return nil, errors.New("no certificate in " + caPEMPath)
	}
	host, _, _ := net.SplitHostPort(addr)
	return redis.NewClient(&redis.Options{Addr: addr, DisableIdentity: true,
		TLSConfig:                &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: pool, ServerName: host},
		MaintNotificationsConfig: &maintnotifications.Config{Mode: maintnotifications.ModeDisabled}}), nil
}

func tlsPing(addr, caPEMPath string) error {
	c, err := TLSClient(addr, caPEMPath)
	if err != nil {
		return err
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	if err := c.Ping(ctx).Err(); err != nil {
		return fmt.Errorf("TLS PING: %w", err)
	}
	return nil
}
