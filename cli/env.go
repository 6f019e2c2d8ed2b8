package cli

import (
	"github.com/spf13/pflag"

	"github.com/idemctl/idemctl/cli/docgen"
)

// setFlagsFromEnv sets each connection and keyspace flag not given on the command
// line from its IDEMCTL_<FLAG> variable, so the variable counts as the flag
// (and wins over the profile, as the flag does). Values are never echoed:
// a URL may hold a password.
func (a *app) setFlagsFromEnv(fs *pflag.FlagSet) error {
	var err error
	fs.VisitAll(func(f *pflag.Flag) {
		if err != nil || f.Changed || !docgen.EnvGroup(docgen.FlagGroup(f)) {
			return
		}
		name := docgen.EnvName(f.Name)
		v := a.getenv(name)
		if v == "" {
			return
		}
		if fs.Set(f.Name, v) != nil {
			err = usageErr("$%s: want %s (for --%s)", name, valueKind(f), f.Name)
			return
		}
		if a.fromEnv == nil {
			a.fromEnv = map[string]string{}
		}
		a.fromEnv[f.Name] = name
	})
	return err
}

// valueKind says in words what a flag accepts.
func valueKind(f *pflag.Flag) string {
	switch f.Value.Type() {
	case "bool":
		return "true or false"
	case "duration":
		return "a duration such as 30s, 5m, 2h or 1d"
	case "bytes":
		return "a size such as 16384, 16KiB or 1MiB"
	case "share":
		return "a share such as 1% or 0.01"
	case "int", "int64":
		return "a whole number"
	}
	return "a " + f.Value.Type()
}
