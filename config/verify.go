package config

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/internal/units"
	"github.com/idemctl/idemctl/verify"
)

// VerifyConfig is a keyspace's verify hook as written in the file: the
// executable and its arguments (placeholders such as {idem_key} filled from
// each record), the timeout of one run, runs at a time, and environment
// variables added for the hook.
type VerifyConfig struct {
	Command     []string          `yaml:"command"`
	Timeout     units.Duration    `yaml:"timeout"`
	Concurrency int               `yaml:"concurrency"`
	Env         map[string]string `yaml:"env"`
}

// hook is the verify.Hook of v; a relative executable path (one holding a
// slash) is taken from dir, the config file's directory.
func (v *VerifyConfig) hook(dir string) verify.Hook {
	h := verify.Hook{Command: append([]string{}, v.Command...), Timeout: v.Timeout.D(), Concurrency: v.Concurrency}
	if len(h.Command) > 0 && dir != "" && strings.Contains(h.Command[0], "/") && !filepath.IsAbs(h.Command[0]) {
		h.Command[0] = filepath.Join(dir, h.Command[0])
	}
	for name, val := range v.Env {
		h.Env = append(h.Env, name+"="+val)
	}
	sort.Strings(h.Env)
	return h
}

// check validates the hook against the keyspace's template captures.
func (v *VerifyConfig) check(ks *inspect.Keyspace) error {
	if v == nil {
		return nil
	}
	if err := v.checkEnv(); err != nil {
		return err
	}
	var caps []string
	if ks.Template != nil {
		caps = ks.Template.Names()
	}
	return v.hook("").Check(caps)
}

// checkEnv refuses a variable name the environment cannot hold.
func (v *VerifyConfig) checkEnv() error {
	for name := range v.Env {
		if name == "" || strings.ContainsAny(name, "=\x00") {
			return fmt.Errorf("env: %q is not a variable name", name)
		}
	}
	return nil
}

// VerifyHook returns the named keyspace's hook, nil when it has none.
func (c *Config) VerifyHook(keyspace string) *verify.Hook {
	for _, k := range c.Keyspaces {
		if k.Name == keyspace && k.Verify != nil {
			dir := ""
			if c.Path != "" {
				dir = filepath.Dir(c.Path)
			}
			h := k.Verify.hook(dir)
			return &h
		}
	}
	return nil
}
