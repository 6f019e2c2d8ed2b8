package inspect

import "github.com/idemctl/idemctl/inspect/keytemplate"

// Value is one key's value as a reader other than the server's pipelines
// holds it (a snapshot's, inspect/snapshot): a string's head and length,
// or the hash fields the keyspaces read.
type Value struct {
	Type    KeyType
	Str     []byte // a string's head, up to the read cap
	StrLen  int64
	Fields  []HashField
	TooBig  bool  // over the reader's limit: skipped, not read
	Mem     int64 // an estimate from the encoding; -1 unknown
	TTLType bool  // a hash type with field TTLs
}

// HashField is one hash field of a Value.
type HashField struct {
	Name     string
	Value    string // up to the read cap
	ValueLen int64
	ExpireMs int64 // -1: none
}

// Classifier turns Values into records as a live scan classifies what
// its pipelines read, at the reader's own time. Their keys, values and
// template captures are carved from shared blocks: a snapshot yields a
// million records a second, and one allocation serves hundreds.
type Classifier struct {
	arena  arena
	groups keytemplate.Slab
}

// Str copies b into the classifier's blocks: a string records may keep
// after the reader's buffer is reused.
func (c *Classifier) Str(b []byte) string { return c.arena.str(b) }

// Record is key's record in ks, its value v judged at atMs: expireMs is
// the key's expiry (-1: none), lockPTTL its companion lock's PTTL (read
// when ks has a lock).
func (c *Classifier) Record(ks *Keyspace, key string, v *Value, expireMs, atMs, lockPTTL int64) Record {
	o := c.observe(v, ks, key, expireMs, atMs)
	if ks.Schema.Lock != nil {
		o.lockPTTL = lockPTTL
	}
	return classifyIn(ks, &o, atMs, &c.groups)
}

// ReadCap is the most a value reader needs of one value for ks: its read
// cap, and at least the head of a fingerprint a record keeps.
func (ks *Keyspace) ReadCap() int { return max(int(min(ks.MaxValue, 1<<30)), fpKeep) }

// HashFields are the hash fields ks's schema reads (its roles, in slot
// order), without the response, whose length alone is read.
func (s *Schema) HashFields() []string {
	var out []string
	for _, name := range s.fields {
		if name != "" {
			out = append(out, name)
		}
	}
	return out
}

// field is the named field, if the hash has it and it had not expired at
// the snapshot's time.
func (v *Value) field(name string, atMs int64) *HashField {
	for i := range v.Fields {
		if f := &v.Fields[i]; f.Name == name {
			if f.ExpireMs >= 0 && f.ExpireMs <= atMs {
				return nil
			}
			return f
		}
	}
	return nil
}

// observe is what a live scan's pipelines would have learned of the key at
// atMs, for keyspace ks.
func (c *Classifier) observe(v *Value, ks *Keyspace, key string, expireMs, atMs int64) observed {
	o := observed{key: key, pttl: -1, mem: v.Mem, memEstimated: v.Mem >= 0, typ: v.Type}
	o.f.respLen = -1
	if expireMs >= 0 {
		o.pttl = expireMs - atMs
	}
	s := ks.Schema
	wantHash := s.Container == ContainerHash
	if wantHash && v.Type != TypeHash || !wantHash && v.Type != TypeString {
		o.wrongType = true
		return o
	}
	if v.TooBig {
		o.f.truncated = true
		return o
	}
	if !wantHash {
		head := v.Str[:min(int64(len(v.Str)), ks.MaxValue)]
		o.valueLen = v.StrLen
		if s.Codec == CodecJSON {
			cut := o.valueLen > int64(len(head))
			decodeJSON(s, head, cut, &o.f)
			o.f.truncated = o.f.truncated || cut
			return o
		}
		o.value = c.arena.str(head)
		return o
	}
	v.observeHash(ks, &o, atMs)
	return o
}

// observeHash fills o from the hash fields ks's schema reads.
func (v *Value) observeHash(ks *Keyspace, o *observed, atMs int64) {
	s := ks.Schema
	ttls := ttlSpan{}
	for slot, name := range s.fields {
		if name == "" {
			continue
		}
		f := v.field(name, atMs)
		if f == nil {
			continue
		}
		ttls.add(f.ExpireMs, atMs)
		switch {
		case f.ValueLen <= ks.MaxValue && int64(len(f.Value)) == f.ValueLen:
			o.f.val[slot], o.f.has[slot] = f.Value, true
		case slot == slotFingerprint:
			// as a live scan reads it: the head of a long fingerprint
			o.f.truncated, o.f.fpLong = true, true
			if f.ValueLen <= fpPrefixMax {
				o.f.val[slot], o.f.has[slot] = f.Value[:min(len(f.Value), fpKeep)], true
			}
		default:
			o.f.truncated = true
		}
	}
	if s.Response != "" {
		if f := v.field(s.Response, atMs); f != nil {
			ttls.add(f.ExpireMs, atMs)
			if f.ValueLen > 0 {
				o.f.respLen = f.ValueLen
			}
		}
	}
	if o.pttl == -1 && v.TTLType {
		ttls.read(&o.f)
	}
}

// ttlSpan folds the present fields' own TTLs as readFieldTTLs does a
// live HPTTL's answer.
type ttlSpan struct {
	lo, hi int64
	never  bool
	any    bool
}

func (t *ttlSpan) add(expireMs, atMs int64) {
	if !t.any {
		t.lo, t.hi, t.any = -1, -1, true
	}
	if expireMs < 0 {
		t.never = true
		return
	}
	ttl := expireMs - atMs
	if t.lo < 0 || ttl < t.lo {
		t.lo = ttl
	}
	t.hi = max(t.hi, ttl)
}

func (t *ttlSpan) read(fs *fields) {
	lo := int64(-1)
	if t.any {
		lo = t.lo
	}
	fs.fieldTTLRead, fs.fieldTTL = true, lo
	fs.fieldTTLMixed = lo >= 0 && (t.never || t.hi-lo > 1000)
}
