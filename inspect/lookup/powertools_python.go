package lookup

import (
	"github.com/idemctl/idemctl/inspect"
)

// LibPowertoolsPython is aws-lambda-powertools (Python): the powertools
// preset with runtime: python.
const LibPowertoolsPython = "powertools-python"

// derivePowertoolsPython keys a record as aws-lambda-powertools (Python)
// does: "<prefix>#<hex digest>", the prefix key_prefix or
// "<AWS_LAMBDA_FUNCTION_NAME>.<module>.<handler's qualified name>" (the
// whole prefix is --function), the digest hashlib's (md5 unless
// hash_function says otherwise) over json.dumps(selection,
// sort_keys=True): default separators, ASCII escapes, integers exact.
// The selection is the event searched with event_key_jmespath (with the
// powertools_* functions); payload validation searches without them. A
// selection Python finds empty stores no record at all.
func derivePowertoolsPython(ks *inspect.Keyspace, in Inputs) (*Derivation, error) {
	d := &Derivation{Library: LibPowertoolsPython}
	set := in.Settings
	algo := hashName(set)
	if in.Event == nil || in.Function == "" {
		return nil, need("keyspace %s (Powertools Python) keys records by <function>.<module>.<handler>#<%s hex of the event's selection>: give --event FILE and --function PREFIX (the part before #: key_prefix, or AWS_LAMBDA_FUNCTION_NAME.module.handler)", ks.Name, algo)
	}
	d.use("function", in.Function, "flag")
	d.use("event", pySorted(*in.Event), "event")
	d.use("hash_function", algo, fromOr(set.HashFunction, set.From))
	sel, err := selectEvent(d, ks, *in.Event, "event_key_jmespath", set.EventKeyJMESPath, set.From, powertoolsFunctions(true), true)
	if err != nil {
		return nil, err
	}
	if pyMissing(sel) {
		return nil, need("keyspace %s: the event's selection (event_key_jmespath %q) is empty: Powertools Python stores no record for such an event", ks.Name, set.EventKeyJMESPath)
	}
	if d.KeyHash, err = digest(algo, "hex", pySorted(sel)); err != nil {
		return nil, need("keyspace %s: %v", ks.Name, err)
	}
	d.Key = in.Function + "#" + d.KeyHash.Value
	if set.ValidationJMESPath == "" {
		return d, nil
	}
	if sel, err = selectEvent(d, ks, *in.Event, "payload_validation_jmespath", set.ValidationJMESPath, set.From, nil, true); err != nil {
		return nil, err
	}
	if d.Fingerprint, err = digest(algo, "hex", pySorted(sel)); err != nil {
		return nil, need("keyspace %s: %v", ks.Name, err)
	}
	return d, nil
}

// pyMissing is Powertools Python's test for no key: a list whose every
// item is None, an empty object, or a value Python counts false that is
// not a number or a boolean (None, "").
func pyMissing(v Value) bool {
	switch v.Kind {
	case Array:
		return allNull(v.Items)
	case Object:
		return len(v.Members) == 0 // iterating a dict yields its names, never None
	case String:
		return v.Str == ""
	case Null:
		return true
	}
	return false
}
