package redisconn

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"
)

// Options are a resolved connection: where, how, and how long to wait.
type Options struct {
	Endpoint         Endpoint
	Mode             string   // standalone, cluster or sentinel
	Seeds            []string // more cluster seeds or sentinel addresses
	Master           string   // sentinel master name
	SentinelPassword string
	TLSCA            string // PEM file
	TLSInsecure      bool
	DialTimeout      time.Duration
	ReadTimeout      time.Duration
	PoolSize         int
}

// Dial builds the client and checks it with PING. warn receives the
// warning a --tls-insecure session deserves.
func Dial(ctx context.Context, o Options, warn io.Writer) (redis.UniversalClient, error) {
	ep := o.Endpoint
	opts := &redis.UniversalOptions{
		Addrs:                    append([]string{ep.Addr}, o.Seeds...),
		DB:                       ep.DB,
		Username:                 ep.User,
		Password:                 ep.Password,
		DialTimeout:              o.DialTimeout,
		ReadTimeout:              o.ReadTimeout,
		WriteTimeout:             o.ReadTimeout,
		PoolSize:                 max(o.PoolSize, 4),
		MaxRetries:               1,
		DisableIdentity:          true, // no CLIENT SETINFO: one less command for least-privilege users
		MaintNotificationsConfig: &maintnotifications.Config{Mode: maintnotifications.ModeDisabled},
	}
	switch o.Mode {
	case "cluster":
		if ep.DB != 0 {
			return nil, inputErr(fmt.Sprintf("Redis Cluster has only database 0; drop /%d from --url", ep.DB))
		}
		opts.IsClusterMode = true
	case "sentinel":
		if o.Master == "" {
			return nil, inputErr("sentinel mode needs the master's name (--sentinel-master)")
		}
		opts.MasterName, opts.SentinelPassword = o.Master, o.SentinelPassword
	}
	if ep.TLS {
		tc, err := tlsConfig(o, warn)
		if err != nil {
			return nil, err
		}
		opts.TLSConfig = tc
	} else if o.TLSCA != "" || o.TLSInsecure {
		return nil, inputErr("--tls-ca/--tls-insecure need a rediss:// URL")
	}
	c := redis.NewUniversalClient(opts)
	pctx, cancel := context.WithTimeout(ctx, o.DialTimeout+o.ReadTimeout)
	defer cancel()
	if err := c.Ping(pctx).Err(); err != nil {
		c.Close()
		return nil, diagnose(ctx, o, err)
	}
	return c, nil
}

func tlsConfig(o Options, warn io.Writer) (*tls.Config, error) {
	tc := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: Host(o.Endpoint.Addr)}
	if o.TLSCA != "" {
		pem, err := os.ReadFile(o.TLSCA)
		if err != nil {
			return nil, inputErr("--tls-ca: " + err.Error())
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, inputErr("--tls-ca " + o.TLSCA + ": no PEM certificates found")
		}
		tc.RootCAs = pool
	}
	if o.TLSInsecure {
		tc.InsecureSkipVerify = true
		fmt.Fprintln(warn, "idemctl: WARNING: --tls-insecure: the server's certificate is NOT verified; anyone on the path can read and change this session")
	}
	return tc, nil
}
