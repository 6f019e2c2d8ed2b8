package snapshot

import (
	"crypto/sha1"
	"errors"

	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/inspect/rdb"
)

// snapValue is one key's value as read from a snapshot, once for every
// keyspace that matches it: a string's head and length, or the hash
// fields some keyspace reads.
type snapValue struct {
	inspect.Value
	// With versions: the string's digest, or every field's (name,
	// digest, expiry), as the version script hashes them.
	digest   [sha1.Size]byte
	digestOK bool
	parts    []versionPart
	cls      *inspect.Classifier // where field values are copied
	// What a hash is read for, while HashFieldsTo calls back.
	wanted   *wantedFields // nil: every field, for detect's draft
	readCap  int
	versions bool
	found    int // the wanted field ValueCap found, -1: none
}

func (v *snapValue) read(r *rdb.Reader, e *rdb.Entry, readCap int, wanted *wantedFields, memory, versions bool) error {
	*v = snapValue{Value: inspect.Value{Type: keyTypeOf(e.Type), Fields: v.Fields[:0], Mem: -1}, parts: v.parts[:0], cls: v.cls}
	if v.cls == nil {
		v.cls = &inspect.Classifier{}
	}
	var err error
	switch e.Type {
	case rdb.TypeString:
		v.Str, v.StrLen, err = r.StringValue(readCap)
		v.digest, v.digestOK = r.ValueDigest()
	case rdb.TypeHash:
		v.TTLType = len(e.Encoding) > 10 && e.Encoding[len(e.Encoding)-10:] == "-field-ttl"
		v.digestOK = true
		nameCap := 256
		if versions {
			nameCap = 1 << 16 // a version hashes every name whole
		}
		v.wanted, v.readCap, v.versions = wanted, readCap, versions
		err = r.HashFieldsTo(nameCap, v)
	}
	if errors.Is(err, rdb.ErrTooBig) {
		v.TooBig, err = true, nil
	}
	if err != nil {
		return err
	}
	if memory {
		if v.Mem, err = r.MemoryEstimate(); err != nil {
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
		if len(v.Fields) < maxDraftFields {
			v.Fields = append(v.Fields, inspect.HashField{Name: string(f.Name), Value: string(f.Value), ValueLen: f.ValueLen, ExpireMs: f.ExpireMs})
		}
		return
	}
	i := v.found
	if i < 0 || string(f.Name) != v.wanted.names[i] {
		i = v.wanted.find(f.Name)
	}
	if i >= 0 {
		sf := inspect.HashField{Name: v.wanted.names[i], ValueLen: f.ValueLen, ExpireMs: f.ExpireMs}
		if !v.wanted.lenOnly[i] {
			sf.Value = v.cls.Str(f.Value)
		}
		v.Fields = append(v.Fields, sf)
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
