package cli

import (
	"time"

	"github.com/spf13/pflag"

	"github.com/idemctl/idemctl/internal/redisconn"
)

// connFlags are the connection flags every Redis-facing command takes.
type connFlags struct {
	url            string
	user           string
	passwordEnv    string
	passwordFile   string
	passwordPrompt bool
	tlsCA          string
	tlsInsecure    bool
	dialTimeout    time.Duration
	readTimeout    time.Duration
	configPath     string
	profile        string
	cluster        bool
	addrs          []string
	sentinel       string
	sentinelPwEn   string
	replicas       bool
	noSecrets      bool // config view: read no password, only say where it would come from

	// given (resolveFlags): a timeout given wins over the profile's; a
	// --profile given beside --rdb must name no server; serverFlag is the
	// first flag given that names a server, which --rdb refuses.
	dialTimeoutGiven, readTimeoutGiven, profileGiven bool
	serverFlag                                       string
}

// resolveFlags records which connection flags were given.
func (c *connFlags) resolveFlags(fs *pflag.FlagSet) {
	c.dialTimeoutGiven, c.readTimeoutGiven = fs.Changed("dial-timeout"), fs.Changed("read-timeout")
	c.profileGiven = fs.Changed("profile")
	c.serverFlag = ""
	for _, name := range serverFlags {
		if fs.Changed(name) {
			c.serverFlag = name
			break
		}
	}
}

func (c *connFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&c.url, "url", "", "Redis URL: redis://[user@]host:port/db, rediss:// for TLS, or host:port (default "+redisconn.DefaultURL+")")
	fs.StringVar(&c.user, "user", "", "Redis ACL user (overrides the URL's)")
	fs.StringVar(&c.passwordEnv, "password-env", "", "read the password from this environment variable")
	fs.StringVar(&c.passwordFile, "password-file", "", "read the password from this file (first line)")
	fs.BoolVar(&c.passwordPrompt, "password-prompt", false, "ask for the password on the terminal (not echoed)")
	fs.StringVar(&c.tlsCA, "tls-ca", "", "PEM file of CA certificates to verify the server with")
	fs.BoolVar(&c.tlsInsecure, "tls-insecure", false, "do not verify the server's TLS certificate (dangerous)")
	c.dialTimeout, c.readTimeout = 5*time.Second, 5*time.Second
	fs.Var(durationValue(&c.dialTimeout), "dial-timeout", "connect timeout")
	fs.Var(durationValue(&c.readTimeout), "read-timeout", "read/write timeout per command or pipeline")
	fs.BoolVar(&c.cluster, "cluster", false, "Redis Cluster: --url (and --addrs) are seed nodes; every primary is scanned")
	fs.StringSliceVar(&c.addrs, "addrs", nil, "more seed nodes (cluster) or sentinel addresses, host:port")
	fs.StringVar(&c.sentinel, "sentinel-master", "", "Sentinel: the master's name; --url (and --addrs) are sentinels")
	fs.StringVar(&c.sentinelPwEn, "sentinel-password-env", "", "read the sentinels' password from this environment variable")
	fs.BoolVar(&c.replicas, "read-from-replicas", false, "scan replicas (one per shard) to spare the primaries; writes still go to primaries")
	fs.StringVar(&c.configPath, "config", "", "config file (default $XDG_CONFIG_HOME/idemctl/config.yaml)")
	fs.StringVar(&c.profile, "profile", "", "profile from the config file")
}
