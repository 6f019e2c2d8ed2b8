package main

import (
	"bufio"
	"os"
	"strings"
	"testing"
)

// unitSettings reads a systemd unit's [Service] settings: key → values
// (a key given more than once keeps each).
func unitSettings(t *testing.T, path string) map[string][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	settings, section := map[string][]string{}, ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, ";"):
		case strings.HasPrefix(line, "["):
			section = line
		case section == "[Service]":
			k, v, _ := strings.Cut(line, "=")
			settings[k] = append(settings[k], v)
		}
	}
	return settings
}

// checkUnit checks the exporter's unit runs idemctl exporter as its own
// user, hardened.
func checkUnit(t *testing.T, path string) {
	t.Helper()
	s := unitSettings(t, path)
	for k, want := range map[string]string{
		"ExecStart": "/usr/bin/idemctl exporter", "User": "idemctl", "Group": "idemctl",
		"NoNewPrivileges": "yes", "ProtectSystem": "strict", "ProtectHome": "yes", "PrivateTmp": "yes",
		"PrivateDevices": "yes", "CapabilityBoundingSet": "", "RestrictSUIDSGID": "yes",
		"Environment": "IDEMCTL_CONFIG=" + configPath,
	} {
		found := false
		for _, v := range s[k] {
			found = found || v == want
		}
		if !found {
			t.Errorf("%s: [Service] %s=%v, want %s=%s", path, k, s[k], k, want)
		}
	}
	if len(s["ReadWritePaths"]) > 0 {
		t.Errorf("%s: ReadWritePaths %v: nothing writable but the StateDirectory", path, s["ReadWritePaths"])
	}
}

// The unit as committed is hardened (the install test checks it again
// as installed, and with systemd-analyze verify where the machine has it).
func TestUnitIsHardened(t *testing.T) {
	checkUnit(t, "../packaging/idemctl-exporter.service")
}
