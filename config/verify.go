package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/internal/units"
	"github.com/idemctl/idemctl/verify/hookspec"
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

// hook is the hook v writes; a relative executable path (one holding a
// slash) is taken from dir, the config file's directory.
func (v *VerifyConfig) hook(dir string) hookspec.Spec {
	h := hookspec.Spec{Command: append([]string{}, v.Command...), Timeout: v.Timeout.D(), Concurrency: v.Concurrency}
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
	return v.hook("").CheckRecord(caps)
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

// VerifyHook returns the named keyspace's hook as written (verify.FromSpec
// makes it one to run), nil when it has none.
func (c *Config) VerifyHook(keyspace string) *hookspec.Spec {
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

// HookProblem says in one line why the named keyspace's verify hook cannot
// run — its executable does not exist, is a directory, is not executable,
// or (a bare name) is not on PATH — and "" when it can or there is no hook.
// The executable is found as the hook will be run: a path holding a slash,
// if relative, from the config file's folder (from the working directory
// when no file was read); a bare name through PATH, as exec (and a shell)
// does.
func (c *Config) HookProblem(keyspace string) string {
	var written string
	for _, k := range c.Keyspaces {
		if k.Name == keyspace && k.Verify != nil && len(k.Verify.Command) > 0 {
			written = k.Verify.Command[0]
		}
	}
	h := c.VerifyHook(keyspace)
	if h == nil || written == "" {
		return ""
	}
	exe := h.Command[0]
	if abs, err := filepath.Abs(exe); err == nil && strings.Contains(written, "/") {
		exe = abs
	}
	prefix := fmt.Sprintf("keyspace %s: verify hook %s", keyspace, exe)
	if !strings.Contains(written, "/") {
		if _, err := exec.LookPath(written); err != nil {
			return fmt.Sprintf("%s is not an executable on PATH (a command without a slash is looked up in PATH; give its path, absolute or relative to the config file's folder)", prefix)
		}
		return ""
	}
	if written != exe {
		from := "the config file's folder"
		if c.Path == "" {
			from = "the working directory"
		}
		prefix += fmt.Sprintf(" (command %s, taken from %s)", written, from)
	}
	st, err := os.Stat(exe)
	switch {
	case err != nil && errors.Is(err, fs.ErrNotExist):
		return prefix + " does not exist: give an absolute path, or one relative to the config file's folder"
	case err != nil:
		return fmt.Sprintf("%s cannot be read: %v", prefix, unwrapPath(err))
	case st.IsDir():
		return prefix + " is a folder, not an executable"
	case st.Mode().Perm()&0o111 == 0:
		return prefix + " is not executable: chmod +x it"
	}
	return ""
}

// unwrapPath is a file error without the path it repeats.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
