// Package deploy holds what ships the exporter to a cluster: the Helm
// chart in helm/idemctl-exporter. Its tests lint and render the chart with
// the real helm and read what it renders.
package deploy

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/idemctl/idemctl/config"
)

const chart = "helm/idemctl-exporter"

// everyPart turns every optional part of the chart on.
var everyPart = []string{"--set", "serviceMonitor.enabled=true", "--set", "prometheusRule.enabled=true",
	"--set", "networkPolicy.enabled=true", "--set", "redisPassword.existingSecret=redis-auth"}

// helm is the helm v4 binary: IDEMCTL_HELM, else helm on PATH.
func helm(t *testing.T, args ...string) string {
	t.Helper()
	bin := os.Getenv("IDEMCTL_HELM")
	if bin == "" {
		var err error
		if bin, err = exec.LookPath("helm"); err != nil {
			t.Fatal("helm not found: install Helm v4 with `GOBIN=/usr/local/bin go install helm.sh/helm/v4/cmd/helm@v4.3.2`, set IDEMCTL_HELM to it, or run `bash .ci/test`")
		}
	}
	var out, errb bytes.Buffer
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.Env = append(os.Environ(), "HELM_CACHE_HOME="+t.TempDir(), "HELM_CONFIG_HOME="+t.TempDir(), "HELM_DATA_HOME="+t.TempDir())
	if err := cmd.Run(); err != nil {
		t.Fatalf("helm %s: %v\n%s%s", strings.Join(args, " "), err, out.String(), errb.String())
	}
	return out.String()
}

func TestChartLints(t *testing.T) {
	if v := helm(t, "version", "--short"); !strings.HasPrefix(v, "v4.") {
		t.Fatalf("helm %s: the chart is checked with Helm v4", v)
	}
	helm(t, "lint", "--strict", chart)
	helm(t, append([]string{"lint", "--strict", chart}, everyPart...)...)
}

// manifest is one rendered object, as far as the tests read it.
type manifest = map[string]any

func render(t *testing.T, args ...string) map[string]manifest {
	t.Helper()
	out := helm(t, append([]string{"template", "rel", chart}, args...)...)
	objs := map[string]manifest{}
	dec := yaml.NewDecoder(strings.NewReader(out))
	for {
		var m manifest
		if err := dec.Decode(&m); errors.Is(err, io.EOF) {
			return objs
		} else if err != nil {
			t.Fatalf("rendered YAML: %v", err)
		}
		if m != nil {
			objs[m["kind"].(string)] = m
		}
	}
}

// get walks a manifest by keys and list indexes.
func get(v any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, _ := v.(map[string]any)
			v = m[k]
		case int:
			l, _ := v.([]any)
			if k >= len(l) {
				return nil
			}
			v = l[k]
		}
	}
	return v
}

func TestChartDefaults(t *testing.T) {
	objs := render(t)
	for _, k := range []string{"Deployment", "Service", "ConfigMap"} {
		if objs[k] == nil {
			t.Errorf("no %s rendered", k)
		}
	}
	for _, k := range []string{"ServiceMonitor", "PrometheusRule", "NetworkPolicy", "Secret"} {
		if objs[k] != nil {
			t.Errorf("%s rendered by default", k)
		}
	}
	// The config the chart mounts is one idemctl reads.
	doc, _ := get(objs["ConfigMap"], "data", "config.yaml").(string)
	if _, err := config.Parse([]byte(doc)); err != nil {
		t.Fatalf("the chart's config: %v\n%s", err, doc)
	}
}

// The pod runs as a non-root user with a read-only root and no way to gain
// privileges, the password comes from the existing Secret, and the
// PrometheusRule's alerts are exactly alerts/idemctl-rules.yml's.
func TestChartEveryPart(t *testing.T) {
	objs := render(t, everyPart...)
	dep := objs["Deployment"]
	pod := get(dep, "spec", "template", "spec")
	c := get(pod, "containers", 0)
	for _, want := range []struct {
		path []any
		val  any
	}{
		{[]any{"securityContext", "runAsNonRoot"}, true},
		{[]any{"automountServiceAccountToken"}, false},
	} {
		if got := get(pod, want.path...); got != want.val {
			t.Errorf("pod %v = %v, want %v", want.path, got, want.val)
		}
	}
	if uid, _ := get(pod, "securityContext", "runAsUser").(int); uid == 0 {
		t.Errorf("the pod runs as uid %v", get(pod, "securityContext", "runAsUser"))
	}
	for _, want := range []struct {
		path []any
		val  any
	}{
		{[]any{"securityContext", "readOnlyRootFilesystem"}, true},
		{[]any{"securityContext", "allowPrivilegeEscalation"}, false},
		{[]any{"securityContext", "capabilities", "drop", 0}, "ALL"},
		{[]any{"env", 1, "valueFrom", "secretKeyRef", "name"}, "redis-auth"},
		{[]any{"env", 1, "name"}, "REDIS_PASSWORD"},
	} {
		if got := get(c, want.path...); got != want.val {
			t.Errorf("container %v = %v, want %v", want.path, got, want.val)
		}
	}
	if get(c, "resources", "limits", "memory") == nil || get(c, "resources", "requests", "cpu") == nil {
		t.Errorf("the container has no resources: %v", get(c, "resources"))
	}
	for _, k := range []string{"ServiceMonitor", "PrometheusRule", "NetworkPolicy"} {
		if objs[k] == nil {
			t.Errorf("%s not rendered with it enabled", k)
		}
	}
	if got, want := ruleNames(get(objs["PrometheusRule"], "spec")), alertNames(t); !slices.Equal(got, want) {
		t.Errorf("PrometheusRule alerts %v\nalerts/idemctl-rules.yml %v", got, want)
	}
}

// The chart's copy of the rules is the alert file itself.
func TestChartRulesAreTheAlertFile(t *testing.T) {
	src, err := os.ReadFile("../alerts/idemctl-rules.yml")
	if err != nil {
		t.Fatal(err)
	}
	cp, err := os.ReadFile(filepath.Join(chart, "files/idemctl-rules.yml"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(src, cp) {
		t.Fatalf("%s/files/idemctl-rules.yml differs from alerts/idemctl-rules.yml: copy it again (cp alerts/idemctl-rules.yml deploy/%s/files/)", chart, chart)
	}
}

func alertNames(t *testing.T) []string {
	t.Helper()
	data, err := os.ReadFile("../alerts/idemctl-rules.yml")
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := yaml.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	return ruleNames(doc)
}

// ruleNames lists the alert names of a rules document's groups, in order.
func ruleNames(doc any) []string {
	var out []string
	groups, _ := get(doc, "groups").([]any)
	for _, g := range groups {
		rules, _ := get(g, "rules").([]any)
		for _, r := range rules {
			if a, ok := get(r, "alert").(string); ok {
				out = append(out, a)
			}
		}
	}
	return out
}
