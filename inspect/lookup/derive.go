package lookup

import (
	"fmt"
	"sort"
	"strings"

	"github.com/idemctl/idemctl/inspect"
)

// Libraries whose keys and fingerprints lookup derives.
const (
	LibTemplate        = "key-template"          // a schema's own key template, no fingerprint
	LibLesson          = "atlasmart"             // the lesson's format: sha256 of the canonical body
	LibPowertoolsTS    = "powertools-typescript" // @aws-lambda-powertools/idempotency
	LibNodeIdempotency = "node-idempotency"      // @node-idempotency/core
)

// Inputs are what the engineer has.
type Inputs struct {
	Key      string            // the idempotency key as the client sent it
	Captures map[string]string // the key template's captures, by name
	Request  *Request          // an HTTP request as logged
	Event    *Value            // a Lambda event
	Function string            // Powertools: the key prefix (the function's name)
	Settings Settings
}

// Settings are a keyspace's library settings a derivation may need.
type Settings struct {
	EventKeyJMESPath   string // Powertools eventKeyJmesPath ("": the whole event)
	ValidationJMESPath string // Powertools payloadValidationJmesPath
	HashFunction       string // Powertools hashFunction ("": md5)
	Runtime            string // Powertools: typescript ("" too) or python
	HMACSecret         []byte // fastapi-idempotency's secret; nil: none (secret=None)
	From               string // where they came from: config or flag
}

// NeedError says what the keyspace's library needs that the inputs lack
// or got wrong: a usage error, in one line.
type NeedError struct{ Msg string }

func (e *NeedError) Error() string { return e.Msg }

func need(format string, args ...any) error {
	return &NeedError{Msg: fmt.Sprintf(format, args...)}
}

// LibraryOf is the library whose rules derive the keyspace's keys: its
// preset's, or the key template's alone for any other schema.
func LibraryOf(ks *inspect.Keyspace) string {
	switch ks.Schema.Name {
	case "atlasmart":
		return LibLesson
	case "powertools":
		return LibPowertoolsTS
	case "node-idempotency":
		return LibNodeIdempotency
	case "express-idempotency":
		return LibExpressIdempotency
	case "gopotency":
		return LibGopotency
	case "fastapi-idempotency":
		return LibFastAPI
	}
	return LibTemplate
}

// Derive computes the record key (and fingerprint) of the inputs in ks.
func Derive(ks *inspect.Keyspace, in Inputs) (*Derivation, error) {
	switch lib := LibraryOf(ks); lib {
	case LibPowertoolsTS:
		return derivePowertoolsRuntime(ks, in)
	case LibLesson:
		return deriveLesson(ks, in)
	case LibNodeIdempotency:
		return deriveNode(ks, in)
	case LibExpressIdempotency:
		return deriveExpress(ks, in)
	case LibGopotency:
		return deriveGopotency(ks, in)
	case LibFastAPI:
		return deriveFastAPI(ks, in)
	default:
		d := &Derivation{Library: lib}
		return d, templateKey(d, ks, in)
	}
}

// derivePowertoolsRuntime picks the Powertools runtime the keyspace names;
// unnamed, TypeScript, and the derivation says which setting decides.
func derivePowertoolsRuntime(ks *inspect.Keyspace, in Inputs) (*Derivation, error) {
	switch in.Settings.Runtime {
	case "python":
		return derivePowertoolsPython(ks, in)
	case "typescript":
		return derivePowertools(ks, in)
	case "":
		d, err := derivePowertools(ks, in)
		if err == nil {
			d.note("derived as Powertools TypeScript: set runtime: python (or --runtime python) for a Python function")
		}
		return d, err
	}
	return nil, need("keyspace %s: runtime %q: want typescript or python", ks.Name, in.Settings.Runtime)
}

// templateKey fills the keyspace's key template from the captures given,
// the key and the request, and sets d.Key.
func templateKey(d *Derivation, ks *inspect.Keyspace, in Inputs) error {
	vals, from := captureValues(ks.Template.Names(), in)
	key, missing, err := ks.Template.Fill(vals)
	if err != nil {
		return need("keyspace %s: %v", ks.Name, err)
	}
	if missing != nil {
		return need("keyspace %s keys records by %s: give %s", ks.Name, ks.Template, flagsFor(missing))
	}
	for _, name := range ks.Template.Names() {
		d.use(name, vals[name], from[name])
	}
	d.Key = key
	return nil
}

// captureValues maps what was given onto the template's captures: flags
// first, then the request (Idempotency-Key, method, path).
func captureValues(names []string, in Inputs) (map[string]string, map[string]string) {
	vals, from := map[string]string{}, map[string]string{}
	set := func(name, v, src string) {
		if _, done := vals[name]; !done && v != "" && has(names, name) {
			vals[name], from[name] = v, src
		}
	}
	for name, v := range in.Captures {
		set(name, v, "flag")
	}
	set(keyCapture(names), in.Key, "flag")
	if r := in.Request; r != nil {
		set(keyCapture(names), r.Header("idempotency-key"), "request")
		set("method", r.Method, "request")
		set("path", r.Path, "request")
		set("endpoint", r.Method+":"+r.Path, "request")
	}
	if m, p := in.Captures["method"], in.Captures["path"]; m != "" && p != "" {
		set("endpoint", m+":"+p, "flag")
	}
	return vals, from
}

// keyCapture is the capture --key fills: idem_key, key or idempotency_key.
func keyCapture(names []string) string {
	for _, n := range []string{"idem_key", "key", "idempotency_key"} {
		if has(names, n) {
			return n
		}
	}
	return "idem_key"
}

func has(names []string, n string) bool {
	for _, x := range names {
		if x == n {
			return true
		}
	}
	return false
}

// flagsFor names the flags that give the missing captures.
func flagsFor(missing []string) string {
	var out []string
	for _, m := range missing {
		switch m {
		case "idem_key", "key", "idempotency_key":
			out = append(out, "--key (or --request with an Idempotency-Key header)")
		case "principal":
			out = append(out, "--principal")
		case "method", "path":
			out = append(out, "--"+m+" (or --request)")
		case "endpoint":
			out = append(out, "--method and --path (or --request)")
		default:
			out = append(out, "--capture "+m+"=VALUE")
		}
	}
	sort.Strings(out)
	return strings.Join(out, ", ")
}
