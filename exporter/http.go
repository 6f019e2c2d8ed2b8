package exporter

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/exporter-toolkit/web"
	"go.yaml.in/yaml/v3"

	"github.com/idemctl/idemctl/inspect"
)

// Registry holds the idemctl collector and the usual process and Go
// runtime metrics. It is the exporter's own, never the global default.
func (e *Exporter) Registry() *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collector{e},
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	reg.MustRegister(e.cfg.Extra...)
	return reg
}

// Handler serves /metrics, /healthz and a short index at /.
func (e *Exporter) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(e.Registry(), promhttp.HandlerOpts{
		ErrorHandling:       promhttp.ContinueOnError,
		MaxRequestsInFlight: 4,
	}))
	mux.HandleFunc("/healthz", e.healthz)
	mux.HandleFunc("/{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprintln(w, "idemctl exporter: /metrics (Prometheus), /healthz (fresh data: 200, else 503)")
	})
	return mux
}

// Health is /healthz's body.
type Health struct {
	Status      string `json:"status"` // ok, starting, stale
	LastSuccess string `json:"last_success,omitempty"`
	LastError   string `json:"last_error,omitempty"`
	Scans       uint64 `json:"scans"`
	Errors      uint64 `json:"errors"`
	InProgress  bool   `json:"scan_in_progress"`
}

// healthz says whether the served data is fresh: 200 when a complete scan
// finished within two intervals plus the scan timeout, 503 otherwise. It
// suits a readiness probe or a blackbox check; it is not a liveness probe
// (a Redis outage would restart the exporter for nothing).
func (e *Exporter) healthz(w http.ResponseWriter, r *http.Request) {
	st := e.state()
	h := Health{Scans: st.scans, Errors: st.errors, InProgress: st.inProgress}
	if st.last != nil && !st.last.Complete {
		h.LastError = inspect.Sanitize(errText(st.last.Err))
	}
	code := http.StatusOK
	switch {
	case st.lastSuccess.IsZero():
		h.Status, code = "starting", http.StatusServiceUnavailable
	case time.Since(st.lastSuccess) > 2*e.cfg.Interval+e.cfg.ScanTimeout:
		h.Status, code = "stale", http.StatusServiceUnavailable
	default:
		h.Status = "ok"
	}
	if !st.lastSuccess.IsZero() {
		h.LastSuccess = st.lastSuccess.UTC().Format(time.RFC3339)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(h)
}

// Serve runs the scan loop and the HTTP server on ln until ctx ends, then
// stops both: the running scan is cancelled, open requests get a few
// seconds. It returns nil on a clean shutdown.
func (e *Exporter) Serve(ctx context.Context, ln net.Listener) error {
	srv := &http.Server{
		Handler:           e.Handler(),
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       10 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       60 * time.Second,
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		e.Run(ctx)
	}()
	if e.cfg.Follow && len(e.cfg.Keyspaces) > 0 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			e.runFollow(ctx)
		}()
	}
	errCh := make(chan error, 1)
	go func() { errCh <- web.Serve(ln, srv, e.webFlags(), e.webLog()) }()
	var err error
	select {
	case <-ctx.Done():
	case err = <-errCh:
		cancel()
	}
	sctx, scancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer scancel()
	_ = srv.Shutdown(sctx)
	wg.Wait()
	if err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// webFlags hands the web config to the Prometheus exporter toolkit, which
// serves TLS and basic auth as every Prometheus exporter does (and reads
// the file anew on each connection, so certificates rotate without a
// restart).
func (e *Exporter) webFlags() *web.FlagConfig {
	path, systemd := e.cfg.WebConfigFile, false
	return &web.FlagConfig{WebListenAddresses: &[]string{}, WebSystemdSocket: &systemd, WebConfigFile: &path}
}

// webLog keeps the toolkit's own lines to warnings and errors: the
// exporter names what it serves itself.
func (e *Exporter) webLog() *slog.Logger {
	w := e.cfg.Log
	if w == nil {
		w = io.Discard
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

// CheckWebConfig reads a web config file and its certificates, as the
// exporter will, so a bad one is refused before serving.
func CheckWebConfig(path string) error { return web.Validate(path) }

// WebConfigTLS reports whether a web config file serves TLS (it holds a
// tls_server_config with a certificate).
func WebConfigTLS(path string) bool {
	if path == "" {
		return false
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return false
	}
	var c struct {
		TLS struct {
			Cert     string `yaml:"cert"`
			CertFile string `yaml:"cert_file"`
		} `yaml:"tls_server_config"`
	}
	if yaml.Unmarshal(data, &c) != nil {
		return false
	}
	return c.TLS.Cert != "" || c.TLS.CertFile != ""
}
