package exporter

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/idemctl/idemctl/internal/testkit/redistest"
)

// /metrics behind the Prometheus web config, as node_exporter and
// redis_exporter serve it: TLS from a CA the client trusts, basic auth
// with a bcrypt hash; the right password gets the metrics, a wrong one
// 401, plain HTTP nothing.
func TestWebConfigTLSAndBasicAuth(t *testing.T) {
	dir := t.TempDir()
	ca, err := redistest.NewCA(dir, "ca.pem")
	if err != nil {
		t.Fatal(err)
	}
	cert, key := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := ca.Issue(cert, key, []net.IP{net.IPv4(127, 0, 0, 1)}, nil); err != nil {
		t.Fatal(err)
	}
	hash, err := bcrypt.GenerateFromPassword([]byte("s3cret"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	webCfg := filepath.Join(dir, "web.yml")
	doc := fmt.Sprintf("tls_server_config:\n  cert_file: %s\n  key_file: %s\nbasic_auth_users:\n  prometheus: %s\n", cert, key, hash)
	if err := os.WriteFile(webCfg, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := CheckWebConfig(webCfg); err != nil || !WebConfigTLS(webCfg) {
		t.Fatalf("the web config: %v, TLS %v", err, WebConfigTLS(webCfg))
	}

	_, c := redistest.SharedClient(t)
	e := newExporter(t, c, func(cfg *Config) { cfg.WebConfigFile = webCfg })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- e.Serve(ctx, ln) }()
	t.Cleanup(func() { cancel(); <-done })

	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca.PEM)
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	url := "https://" + ln.Addr().String() + "/metrics"
	get := func(user, pass string) (int, string) {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
		if user != "" {
			req.SetBasicAuth(user, pass)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("GET %s: %v", url, err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	if code, body := get("prometheus", "s3cret"); code != http.StatusOK || !strings.Contains(body, "idemctl_build_info") {
		t.Fatalf("right password: %d\n%.300s", code, body)
	}
	if code, _ := get("prometheus", "wrong"); code != http.StatusUnauthorized {
		t.Fatalf("wrong password: %d, want 401", code)
	}
	if code, _ := get("", ""); code != http.StatusUnauthorized {
		t.Fatalf("no password: %d, want 401", code)
	}
	if resp, err := http.Get("http://" + ln.Addr().String() + "/metrics"); err == nil {
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			t.Fatal("plain HTTP served the metrics")
		}
	}
}

// A web config that cannot serve is refused before anything listens,
// naming the fault.
func TestBadWebConfigRefused(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "web.yml")
	os.WriteFile(bad, []byte("tls_server_config:\n  cert_file: /nonexistent/cert.pem\n  key_file: /nonexistent/key.pem\n"), 0o600)
	if err := CheckWebConfig(bad); err == nil || !strings.Contains(err.Error(), "nonexistent") {
		t.Fatalf("missing certificate: %v", err)
	}
	if err := CheckWebConfig(filepath.Join(dir, "absent.yml")); err == nil {
		t.Fatal("an absent web config was accepted")
	}
	if err := CheckWebConfig(""); err != nil || WebConfigTLS("") {
		t.Fatalf("no web config: %v", err)
	}
}
