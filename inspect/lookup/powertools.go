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
	sel, err := selectEvent(d, ks, *in.Event, "event_key_jmespath", set.EventKeyJMESPath, set.From)
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
	if sel, err = selectEvent(d, ks, *in.Event, "payload_validation_jmespath", set.ValidationJMESPath, set.From); err != nil {
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

// selectEvent searches the event with expr (the whole event when empty).
func selectEvent(d *Derivation, ks *inspect.Keyspace, event Value, setting, expr, from string) (Value, error) {
	if expr == "" {
		return event, nil
	}
	d.use(setting, expr, from)
	jp, err := jmespath.Compile(expr, powertoolsFunctions...)
	if err != nil {
		return Value{}, need("keyspace %s: %s %q: %v", ks.Name, setting, expr, err)
	}
	out, err := jp.Search(toAny(event))
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
		for _, it := range v.Items {
			if it.Kind != Null {
				return false
			}
		}
		return true
	case Object:
		for _, m := range v.Members {
			if m.Value.Kind != Null {
				return false
			}
		}
		return true
	}
	return false
}
