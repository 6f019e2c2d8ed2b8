package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// moduleRoot finds the directory of this module's go.mod.
func moduleRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == os.DevNull {
		return "", errors.New("not inside the idemctl module: run from the repository (go run ./bench)")
	}
	return filepath.Dir(gomod), nil
}

func (h *harness) build(ctx context.Context) error {
	if h.cfg.Idemctl != "" {
		h.bin = h.cfg.Idemctl
		return nil
	}
	root, err := moduleRoot()
	if err != nil {
		return err
	}
	h.bin = filepath.Join(h.tmp, "idemctl")
	start := time.Now()
	cmd := exec.CommandContext(ctx, "go", "build", "-o", h.bin, ".")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build idemctl: %v\n%s", err, out)
	}
	h.cfg.logf("built idemctl in %v", time.Since(start).Round(time.Millisecond))
	return nil
}

// idemctlArgs are the connection and keyspace flags every idemctl run gets.
func (h *harness) idemctlArgs(cmd string, extra ...string) []string {
	args := []string{cmd, "--url", h.srv.URL(0), "--preset", "atlasmart",
		"--reserve-ttl", reserveTTL.String(), "--processing-timeout", processingTimeout.String(),
		"--retention", retention.String()}
	return append(args, extra...)
}

// env keeps the developer's config and URL away from the measured runs.
func (h *harness) env() []string {
	var out []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "IDEMCTL_") || strings.HasPrefix(kv, "XDG_CONFIG_HOME=") {
			continue
		}
		out = append(out, kv)
	}
	return append(out, "XDG_CONFIG_HOME="+filepath.Join(h.tmp, "xdg"))
}
