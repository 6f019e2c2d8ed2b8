package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/pflag"

	"github.com/idemctl/idemctl/config"
	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/inspect/keytemplate"
	"github.com/idemctl/idemctl/inspect/lookup"
	"github.com/idemctl/idemctl/internal/safefile"
)

// findCmd holds find's flags.
type findCmd struct {
	readFlags
	output                      string
	key, principal, method, uri string
	captures                    []string
	requestFile, eventFile      string
	function, eventKeyPath      string
	validationPath, hashFunc    string
	runtime, hmacSecretEnv      string
	line                        givenFlags // the flags given, for the printed command
}

func (o *findCmd) flags(fs *pflag.FlagSet) {
	outputFlag(fs, &o.output, "", "table (or text) or json: the record, the verdict and, in json, the derivation (default: table on a terminal, json otherwise)", "table", "json")
	fs.StringVar(&o.key, "key", "", "the idempotency key as the client sent it")
	fs.StringVar(&o.principal, "principal", "", "the key template's principal capture (the customer)")
	fs.StringVar(&o.method, "method", "", "the request's method (the method capture, or the endpoint's first half)")
	fs.StringVar(&o.uri, "path", "", "the request's path (the path capture, or the endpoint's second half)")
	fs.StringArrayVar(&o.captures, "capture", nil, "any capture of the key template, NAME=VALUE (repeatable)")
	fs.StringVar(&o.requestFile, "request", "", "an HTTP request as logged: JSON {method, path, headers, body} or raw HTTP/1.1 text (- for stdin)")
	fs.StringVar(&o.eventFile, "event", "", "a Lambda event (JSON) for Powertools (- for stdin)")
	fs.StringVar(&o.function, "function", "", "Powertools: the key prefix, the function's name (AWS_LAMBDA_FUNCTION_NAME) or keyPrefix (default: the keyspace's function_name)")
	fs.StringVar(&o.eventKeyPath, "event-key-jmespath", "", "Powertools: eventKeyJmesPath (default: the keyspace's event_key_jmespath; none: the whole event)")
	fs.StringVar(&o.validationPath, "validation-jmespath", "", "Powertools: payloadValidationJmesPath (default: the keyspace's payload_validation_jmespath)")
	fs.StringVar(&o.hashFunc, "hash-function", "", "Powertools: hashFunction (default: the keyspace's hash_function, else md5)")
	fs.StringVar(&o.hmacSecretEnv, "hmac-secret-env", "", "fastapi-idempotency: the environment variable holding the app's secret= (default: the keyspace's hmac_secret_env; none: plain SHA-256)")
	fs.StringVar(&o.runtime, "runtime", "", "Powertools: typescript or python (default: the keyspace's runtime, else typescript)")
	o.readFlags.registerSnapshot(fs)
}

func (o *findCmd) resolveFlags(fs *pflag.FlagSet) {
	o.readFlags.resolveFlags(fs)
	o.line = flagsGiven(fs)
}

func (o *findCmd) run(ctx context.Context, a *app, _ []string) error {
	format, err := outputFormat(o.output, a.isTTY, "table", "json")
	if err != nil {
		return err
	}
	in, err := o.inputs(a)
	if err != nil {
		return err
	}
	s, err := a.openSession(ctx, o.spec(keyspacesRequired))
	if err != nil {
		return err
	}
	defer s.Close()
	a.noteSnapshot(s)
	ks, err := oneKeyspace(s.keyspaces)
	if err != nil {
		return err
	}
	if err := o.settings(a, &in, s.cfg, ks.Name); err != nil {
		return err
	}
	d, err := lookup.Derive(ks, in)
	var ne *lookup.NeedError
	if errors.As(err, &ne) {
		return usageErr("%s", ne.Msg)
	}
	if err != nil {
		return err
	}
	res := findResult{ks: ks, d: d}
	if res.rec, res.verdict, err = lookup.Find(ctx, s.client, ks, d, s.scan); err != nil {
		return fmt.Errorf("reading %s: %w", inspect.Sanitize(d.Key), err)
	}
	res.next = o.nextCommand(ctx, s, &res)
	if err := res.print(a, format); err != nil || res.rec != nil {
		return err
	}
	// Nothing under the key: printed, and told to scripts as grep would.
	return &exitErr{code: ExitNotFound}
}

// oneKeyspace is the keyspace find derives in: it needs exactly one.
func oneKeyspace(kss []*inspect.Keyspace) (*inspect.Keyspace, error) {
	if len(kss) == 1 {
		return kss[0], nil
	}
	names := make([]string, len(kss))
	for i, ks := range kss {
		names[i] = ks.Name
	}
	return nil, usageErr("find derives a key in one keyspace: give --keyspace NAME (one of %s)", strings.Join(names, ", "))
}

// settings fills what the keyspace's library was configured with: the
// flags, else the keyspace's config.
func (o *findCmd) settings(a *app, in *lookup.Inputs, cfg *config.Config, name string) error {
	var kc config.KeyspaceConfig
	if cfg != nil {
		for _, k := range cfg.Keyspaces {
			if k.Name == name {
				kc = k
			}
		}
	}
	set := &in.Settings
	set.From = "config"
	if o.eventKeyPath != "" || o.validationPath != "" || o.hashFunc != "" || o.runtime != "" {
		set.From = "flag"
	}
	set.EventKeyJMESPath = first(o.eventKeyPath, kc.EventKeyJMESPath)
	set.ValidationJMESPath = first(o.validationPath, kc.PayloadValidationJMESPath)
	set.HashFunction = first(o.hashFunc, kc.HashFunction)
	set.Runtime = first(o.runtime, kc.Runtime)
	in.Function = first(o.function, kc.FunctionName)
	if env := first(o.hmacSecretEnv, kc.HMACSecretEnv); env != "" {
		secret := a.getenv(env)
		if secret == "" {
			return usageErr("hmac_secret_env %s: the variable is empty or unset", env)
		}
		set.HMACSecret = []byte(secret)
	}
	return nil
}

func first(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// inputs reads the flags and files into what lookup derives from.
func (o *findCmd) inputs(a *app) (lookup.Inputs, error) {
	in := lookup.Inputs{Key: o.key, Captures: map[string]string{}}
	for name, v := range map[string]string{"principal": o.principal, "method": o.method, "path": o.uri} {
		if v != "" {
			in.Captures[name] = v
		}
	}
	for _, c := range o.captures {
		name, v, ok := strings.Cut(c, "=")
		if !ok || !keytemplate.ValidName(name) {
			return in, usageErr("--capture %q: want NAME=VALUE", c)
		}
		in.Captures[name] = v
	}
	if o.requestFile != "" {
		data, err := o.readInput(a, "--request", o.requestFile)
		if err != nil {
			return in, err
		}
		if in.Request, err = lookup.ParseRequest(data); err != nil {
			return in, usageErr("--request %s: %v", o.requestFile, err)
		}
	}
	if o.eventFile != "" {
		data, err := o.readInput(a, "--event", o.eventFile)
		if err != nil {
			return in, err
		}
		ev, err := lookup.ParseJSON(data)
		if err != nil {
			return in, usageErr("--event %s: not JSON: %v", o.eventFile, err)
		}
		in.Event = &ev
	}
	if in.Key == "" && in.Request == nil && in.Event == nil && len(in.Captures) == 0 {
		return in, usageErr("find needs what the ticket holds: --key (with the template's captures), --request FILE or --event FILE")
	}
	return in, nil
}

func (o *findCmd) readInput(a *app, flag, path string) ([]byte, error) {
	var data []byte
	var err error
	if path == "-" {
		data, err = io.ReadAll(io.LimitReader(a.stdin, 8<<20))
	} else {
		data, err = safefile.Read(path, 8<<20)
	}
	if err != nil {
		return nil, usageErr("%s %s: %v", flag, path, err)
	}
	return data, nil
}
