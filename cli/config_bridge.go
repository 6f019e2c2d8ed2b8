package cli

import (
	"github.com/idemctl/idemctl/config"
	"github.com/idemctl/idemctl/doctor"
	"github.com/idemctl/idemctl/verify"
)

// The config holds what the file says in its own types and imports
// neither the doctor nor the hooks' runner (ARCHITECTURE.md's floors):
// the command layer hands it the doctor's rule names and turns its
// settings into what each service takes.

// checkConfigRules refuses a silence of a rule the doctor does not have,
// naming its line as the config's own checks do.
func checkConfigRules(cfg *config.Config) error {
	return cfg.CheckSilences(doctor.RuleIDs())
}

// verifyHook is the keyspace's hook from the config, ready to run (nil:
// it has none).
func verifyHook(cfg *config.Config, keyspace string) *verify.Hook {
	if cfg == nil {
		return nil
	}
	return verify.FromSpec(cfg.VerifyHook(keyspace))
}

// doctorOptions are the config's doctor settings as the doctor takes
// them; flags given on the command line win (the caller applies them).
func doctorOptions(cfg *config.Config) doctor.Options {
	if cfg == nil {
		return doctor.Options{}
	}
	d := cfg.Doctor
	o := doctor.Options{RetryHorizon: d.RetryHorizon.D(), RequireFsync: d.RequireFsync}
	for _, s := range d.Silence {
		o.Silence = append(o.Silence, doctor.Silence{Rule: s.Rule, Keyspace: s.Keyspace, Reason: s.Reason})
	}
	return o
}
