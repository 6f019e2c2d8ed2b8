package cli

import (
	"fmt"

	"github.com/idemctl/idemctl/config"
	"github.com/idemctl/idemctl/internal/redisconn"
)

// resolveSession is openSession's first half for a server: config,
// profile and flags (flags win), the scan settings and keyspaces sp asks
// for, and how to dial — without dialling.
func (a *app) resolveSession(sp sessionSpec) (*session, error) {
	cf := sp.conn
	cfg, name, prof, err := a.loadProfile(cf.configPath, cf.profile)
	if err != nil {
		return nil, err
	}
	s := &session{cfg: cfg, profileName: name, profile: prof, osUser: a.user(), origin: a.origin()}
	if cfg.Path != "" && a.configFile(cf.configPath).from == "default" && !a.configNoted {
		// Only the file nobody named: its settings apply silently otherwise.
		a.configNoted = true
		fmt.Fprintf(a.stderr, "idemctl: using config %s%s\n", cfg.Path, profileNote(name))
	}

	if s.ep, err = a.resolveEndpoint(cf, cfg, name, prof); err != nil {
		return nil, err
	}

	if sp.scan != nil {
		s.scan = scanOptions(sp.scan, prof)
	}
	if sp.need != noKeyspaces {
		if s.keyspaces, err = resolveKeyspaces(cfg, prof, sp.keyspace, sp.need); err != nil {
			return nil, err
		}
	}
	if err := a.resolveConnection(s, cf, prof); err != nil {
		return nil, err
	}
	return s, nil
}

// resolveEndpoint is the address and credentials: --url, the profile's or
// the default, with the user and password from flags or profile, and the
// warnings a password's source deserves.
func (a *app) resolveEndpoint(cf *connFlags, cfg *config.Config, name string, prof *config.Profile) (redisconn.Endpoint, error) {
	rawURL, fromFlag := cf.url, cf.url != "" && a.fromEnv["url"] == ""
	if cf.url != "" && !fromFlag && prof.URL != "" {
		fmt.Fprintf(a.stderr, "idemctl: note: the URL comes from %s, not from profile %s\n", a.fromEnv["url"], name)
	}
	if rawURL == "" {
		rawURL = prof.URL
	}
	if rawURL == "" {
		rawURL = redisconn.DefaultURL
	}
	ep, err := redisconn.ParseURL(rawURL)
	if err != nil {
		return ep, usageErr("%v", err)
	}
	if ep.Password != "" && fromFlag {
		fmt.Fprintln(a.stderr, "idemctl: warning: a password in --url is visible in the process list; use --password-env or --password-file")
	}
	if ep.Password != "" && !fromFlag && cfg.Path != "" {
		warnReadable(a, cfg.Path)
	}
	if u := pick(cf.user, prof.User); u != "" {
		ep.User = u
	}
	if cf.noSecrets {
		return ep, nil
	}
	pw, err := redisconn.ReadPassword(pick(cf.passwordEnv, prof.PasswordEnv), pick(cf.passwordFile, prof.PasswordFile), a.getenv)
	if err != nil {
		return ep, err
	}
	if f := pick(cf.passwordFile, prof.PasswordFile); f != "" && pick(cf.passwordEnv, prof.PasswordEnv) == "" {
		warnReadable(a, f)
	}
	if cf.passwordPrompt {
		if pw, err = a.promptPassword(ep); err != nil {
			return ep, err
		}
	}
	if pw != "" {
		ep.Password = pw
	}
	return ep, nil
}

// sessionMode is standalone, cluster or sentinel: the flags', else the
// profile's, else standalone.
func sessionMode(cf *connFlags, prof *config.Profile) (string, error) {
	mode := prof.Mode
	switch {
	case cf.cluster:
		mode = "cluster"
	case cf.sentinel != "":
		mode = "sentinel"
	case mode == "":
		mode = "standalone"
	}
	switch mode {
	case "standalone", "cluster", "sentinel":
	default:
		return "", usageErr("profile mode %q: want standalone, cluster or sentinel", mode)
	}
	return mode, nil
}

// resolveConnection fills in how to dial: the mode, seeds, Sentinel
// password, replicas and timeouts (the flags', else the profile's).
func (a *app) resolveConnection(s *session, cf *connFlags, prof *config.Profile) error {
	mode, err := sessionMode(cf, prof)
	if err != nil {
		return err
	}
	seeds := cf.addrs
	if len(seeds) == 0 {
		seeds = prof.Addrs
	}
	var sentinelPw string
	if env := pick(cf.sentinelPwEn, prof.SentinelPasswordEnv); env != "" && !cf.noSecrets {
		if sentinelPw = a.getenv(env); sentinelPw == "" {
			return usageErr("--sentinel-password-env %s: the variable is empty or unset", env)
		}
	}
	s.mode = mode
	s.scan.Replicas = cf.replicas || prof.ReadFromReplicas
	if s.scan.Replicas && mode == "sentinel" {
		return usageErr("--read-from-replicas is not supported with Sentinel yet: scan the master, or point --url at a replica")
	}
	s.opts = redisconn.Options{
		Mode: mode, Seeds: seeds, Master: pick(cf.sentinel, prof.MasterName), SentinelPassword: sentinelPw,
		Endpoint: s.ep, TLSCA: pick(cf.tlsCA, prof.TLSCA), TLSInsecure: cf.tlsInsecure || prof.TLSInsecure,
		DialTimeout: cf.dialTimeout, ReadTimeout: cf.readTimeout, PoolSize: s.scan.InFlight + 2,
	}
	if !cf.dialTimeoutGiven && prof.DialTimeout > 0 {
		s.opts.DialTimeout = prof.DialTimeout.D()
	}
	if !cf.readTimeoutGiven && prof.ReadTimeout > 0 {
		s.opts.ReadTimeout = prof.ReadTimeout.D()
	}
	return nil
}
