package inspect

import (
	"crypto/sha1"
	"errors"

	"github.com/idemctl/idemctl/inspect/rdb"
)

// snapValue is one key's value as read from a snapshot, once for every
// keyspace that matches it: a string's head and length, or the hash
// fields some keyspace reads.
type snapValue struct {
	typ     KeyType
	str     []byte // the string's head, up to the largest read cap (the reader's buffer)
	strLen  int64
	fields  []snapField
	tooBig  bool  // over the reader's blob limit: skipped, not read
	mem     int64 // an estimate from the encoding; -1 unknown
	ttlType bool  // a hash type with field TTLs
	// With versions: the string's digest, or every field's (name,
	// digest, expiry), as the version script hashes them.
	digest   [sha1.Size]byte
	digestOK bool
	parts    []versionPart
	arena    *arena // where field values are copied (nil: each its own)
	// What a hash is read for, while HashFieldsTo calls back.
	wanted   *wantedFields // nil: every field, for detect's draft
	readCap  int
	versions bool
	found    int // the wanted field ValueCap found, -1: none
}

type snapField struct {
	name     string
	value    string // up to the read cap
	valueLen int64
	expireMs int64 // -1: none
}

func (v *snapValue) read(r *rdb.Reader, e *rdb.Entry, readCap int, wanted *wantedFields, memory, versions bool) error {
	*v = snapValue{typ: keyTypeOf(e.Type), fields: v.fields[:0], parts: v.parts[:0], mem: -1, arena: v.arena}
	if v.arena == nil {
		v.arena = &arena{}
	}
	var err error
	switch e.Type {
	case rdb.TypeString:
		v.str, v.strLen, err = r.StringValue(readCap)
		v.digest, v.digestOK = r.ValueDigest()
	case rdb.TypeHash:
		v.ttlType = len(e.Encoding) > 10 && e.Encoding[len(e.Encoding)-10:] == "-field-ttl"
		v.digestOK = true
		nameCap := 256
		if versions {
			nameCap = 1 << 16 // a version hashes every name whole
		}
		v.wanted, v.readCap, v.versions = wanted, readCap, versions
		err = r.HashFieldsTo(nameCap, v)
	}
	if errors.Is(err, rdb.ErrTooBig) {
		v.tooBig, err = true, nil
	}
	if err != nil {
		return err
	}
	if memory {
		if v.mem, err = r.MemoryEstimate(); err != nil {
			return err
		}
	}
	return nil
}

// ValueCap is the read cap of a hash field (rdb.FieldReader): none for
// one not read, or read for its length alone.
func (v *snapValue) ValueCap(name []byte) int {
	if v.wanted == nil {
		return v.readCap
	}
	v.found = v.wanted.find(name) // for Field, which follows with the same name
	if v.versions || v.found >= 0 && !v.wanted.lenOnly[v.found] {
		return v.readCap
	}
	return 0
}

// Field keeps what the keyspaces read of one hash field
// (rdb.FieldReader).
func (v *snapValue) Field(f *rdb.HashField) {
	if v.versions && len(v.parts) <= maxVersionFields {
		v.parts = append(v.parts, versionPart{name: string(f.Name), digest: f.Digest, expireMs: f.ExpireMs})
		v.digestOK = v.digestOK && f.DigestOK && f.NameLen == int64(len(f.Name))
	}
	if f.NameLen > 256 {
		return
	}
	if v.wanted == nil { // every field, for detect's draft
		if len(v.fields) < maxDraftFields {
			v.fields = append(v.fields, snapField{name: string(f.Name), value: string(f.Value), valueLen: f.ValueLen, expireMs: f.ExpireMs})
		}
		return
	}
	i := v.found
	if i < 0 || string(f.Name) != v.wanted.names[i] {
		i = v.wanted.find(f.Name)
	}
	if i >= 0 {
		sf := snapField{name: v.wanted.names[i], valueLen: f.ValueLen, expireMs: f.ExpireMs}
		if !v.wanted.lenOnly[i] {
			sf.value = v.arena.str(f.Value)
		}
		v.fields = append(v.fields, sf)
	}
}

// wantedFields are the hash fields the keyspaces read: a handful, found
// by a linear compare faster than a map's hash.
type wantedFields struct {
	names   []string
	lenOnly []bool // only its length is read (the response)
}

func (w *wantedFields) add(name string, lenOnly bool) {
	for i, n := range w.names {
		if n == name {
			w.lenOnly[i] = w.lenOnly[i] && lenOnly
			return
		}
	}
	w.names, w.lenOnly = append(w.names, name), append(w.lenOnly, lenOnly)
}

func (w *wantedFields) find(name []byte) int {
	for i, n := range w.names {
		if string(name) == n {
			return i
		}
	}
	return -1
}

// field is the named field, if the hash has it and it had not expired at
// the snapshot's time.
func (v *snapValue) field(name string, atMs int64) *snapField {
	for i := range v.fields {
		if f := &v.fields[i]; f.name == name {
			if f.expireMs >= 0 && f.expireMs <= atMs {
				return nil
			}
			return f
		}
	}
	return nil
}

// observe is what a live scan's pipelines would have learned of the key at
// the snapshot's time, for keyspace ks.
func (v *snapValue) observe(ks *Keyspace, key string, expireMs, atMs int64) observed {
	o := observed{key: key, pttl: -1, mem: v.mem, memEstimated: v.mem >= 0, typ: v.typ}
	o.f.respLen = -1
	if expireMs >= 0 {
		o.pttl = expireMs - atMs
	}
	s := ks.Schema
	wantHash := s.Container == ContainerHash
	if wantHash && v.typ != TypeHash || !wantHash && v.typ != TypeString {
		o.wrongType = true
		return o
	}
	if v.tooBig {
		o.f.truncated = true
		return o
	}
	if !wantHash {
		head := v.str[:min(int64(len(v.str)), ks.MaxValue)]
		o.valueLen = v.strLen
		if s.Codec == CodecJSON {
			cut := o.valueLen > int64(len(head))
			decodeJSON(s, head, cut, &o.f)
			o.f.truncated = o.f.truncated || cut
			return o
		}
		o.value = v.arena.str(head)
		return o
	}
	v.observeHash(ks, &o, atMs)
	return o
}

// observeHash fills o from the hash fields ks's schema reads.
func (v *snapValue) observeHash(ks *Keyspace, o *observed, atMs int64) {
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
		ttls.add(f.expireMs, atMs)
		switch {
		case f.valueLen <= ks.MaxValue && int64(len(f.value)) == f.valueLen:
			o.f.val[slot], o.f.has[slot] = f.value, true
		case slot == slotFingerprint:
			// as a live scan reads it: the head of a long fingerprint
			o.f.truncated, o.f.fpLong = true, true
			if f.valueLen <= fpPrefixMax {
				o.f.val[slot], o.f.has[slot] = f.value[:min(len(f.value), fpKeep)], true
			}
		default:
			o.f.truncated = true
		}
	}
	if s.Response != "" {
		if f := v.field(s.Response, atMs); f != nil {
			ttls.add(f.expireMs, atMs)
			if f.valueLen > 0 {
				o.f.respLen = f.valueLen
			}
		}
	}
	if o.pttl == -1 && v.ttlType {
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
