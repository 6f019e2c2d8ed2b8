// Package xdg places idemctl's files where the XDG base directory
// specification says: config under $XDG_CONFIG_HOME, state (the audit log)
// under $XDG_STATE_HOME, each with its home-relative default.
//
// Floor 0 of ARCHITECTURE.md, a foundation: it imports no idemctl package
// but other foundations.
package xdg

import "path/filepath"

// Path is $envVar/idemctl/name, or $HOME/homeDefault/idemctl/name when the
// variable is unset, or "" when HOME is unset too. getenv is the caller's
// view of the environment, so tests stay hermetic.
func Path(getenv func(string) string, envVar, homeDefault, name string) string {
	dir := getenv(envVar)
	if dir == "" {
		home := getenv("HOME")
		if home == "" {
			return ""
		}
		dir = filepath.Join(home, homeDefault)
	}
	return filepath.Join(dir, "idemctl", name)
}
