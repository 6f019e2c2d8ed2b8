package lookup

import (
	"strings"

	jmespath "github.com/jmespath-community/go-jmespath"

	"github.com/idemctl/idemctl/inspect"
)

// derivePowertools keys a record as @aws-lambda-powertools/idempotency
// (TypeScript) does: "<prefix>#<digest>", the prefix the function's name
// (AWS_LAMBDA_FUNCTION_NAME) or the keyPrefix option, the digest the
// base64 hash (md5 unless hashFunction says otherwise) of
// JSON.stringify(deepSort(selection)), where the selection is the event
// searched with eventKeyJmesPath (the whole event without one). With
// payloadValidationJmesPath, the record's validation field holds the same
// hash over that search.
func derivePowertools(ks *inspect.Keyspace, in Inputs) (*Derivation, error) {
	d := &Derivation{Library: LibPowertoolsTS}
	prefix := in.Function
	if in.Event == nil || prefix == "" {
		if in.Event == nil && in.Captures["digest"] != "" {
			return d, templateKey(d, ks, in)
		}
		return nil, need("keyspace %s (Powertools TypeScript) keys records by <function>#<%s of the event's selection>: give --event FILE and --function NAME (AWS_LAMBDA_FUNCTION_NAME, or the keyPrefix)", ks.Name, hashName(in.Settings))
	}
	d.use("function", prefix, "flag")
	d.use("event", jsStringify(*in.Event), "event")
	set := in.Settings
	algo := hashName(set)
	d.use("hash_function", algo, fromOr(set.HashFunction, set.From))
	sel, err := selectEvent(d, ks, *in.Event, "event_key_jmespath", set.EventKeyJMESPath, set.From, powertoolsFunctions(false), false)
	if err != nil {
		return nil, err
	}
	if missingKey(sel) {
		d.note("the selection is empty: Powertools warns and hashes it anyway, or refuses the event with throwOnNoIdempotencyKey")
	}
	if d.KeyHash, err = digest(algo, "base64", jsStringify(deepSort(sel))); err != nil {
		return nil, need("keyspace %s: %v", ks.Name, err)
	}
	d.Key = prefix + "#" + d.KeyHash.Value
	if _, ok := ks.Template.Match(d.Key); !ok {
		d.note("the key does not fit the keyspace's template %s", ks.Template)
	}
	if set.ValidationJMESPath == "" {
		return d, nil
	}
	if sel, err = selectEvent(d, ks, *in.Event, "payload_validation_jmespath", set.ValidationJMESPath, set.From, powertoolsFunctions(false), false); err != nil {
		return nil, err
	}
	if d.Fingerprint, err = digest(algo, "base64", jsStringify(deepSort(sel))); err != nil {
		return nil, need("keyspace %s: %v", ks.Name, err)
	}
	return d, nil
}

func hashName(s Settings) string {
	if s.HashFunction == "" {
		return "md5"
	}
	return strings.ToLower(s.HashFunction)
}

func fromOr(v, from string) string {
	if v == "" || from == "" {
		return "default"
	}
	return from
}

// selectEvent searches the event with expr (the whole event when empty),
// with funcs beside JMESPath's own; lits keeps numbers as written.
func selectEvent(d *Derivation, ks *inspect.Keyspace, event Value, setting, expr, from string, funcs []jmespath.FunctionEntry, lits bool) (Value, error) {
	if expr == "" {
		return event, nil
	}
	d.use(setting, expr, from)
	jp, err := jmespath.Compile(expr, funcs...)
	if err != nil {
		return Value{}, need("keyspace %s: %s %q: %v", ks.Name, setting, expr, err)
	}
	out, err := jp.Search(toAny(event, lits))
	if err != nil {
		return Value{}, need("keyspace %s: %s %q on the event: %v", ks.Name, setting, expr, err)
	}
	return fromAny(out), nil
}

// missingKey is Powertools' test for a selection with no key in it: null,
// or an object or array whose every value is null.
func missingKey(v Value) bool {
	switch v.Kind {
	case Null:
		return true
	case Array:
		return allNull(v.Items)
	case Object:
		vals := make([]Value, len(v.Members))
		for i, m := range v.Members {
			vals[i] = m.Value
		}
		return allNull(vals)
	}
	return false
}

// allNull reports whether every value is null (so, too, for none).
func allNull(vs []Value) bool {
	for _, v := range vs {
		if v.Kind != Null {
			return false
		}
	}
	return true
}
