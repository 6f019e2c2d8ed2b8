package rdb

// skipStream consumes a stream (rdb.c, rdbSaveObject): its listpacks, its
// metadata, and its consumer groups with their pending entries. Nothing
// of it is decoded.
func (r *Reader) skipStream(t byte) error {
	n, err := r.length("a stream's listpack count")
	if err != nil {
		return err
	}
	for range n {
		if err := r.skipString("a stream node's master ID"); err != nil {
			return err
		}
		if err := r.skipString("a stream node's listpack"); err != nil {
			return err
		}
	}
	meta := 3 // length, last ID (ms, seq)
	if t >= typeStreamListpack2 {
		meta += 5 // first ID, max deleted ID, entries added
	}
	if err := r.skipLengths(meta, "a stream's metadata"); err != nil {
		return err
	}
	groups, err := r.length("a stream's consumer group count")
	if err != nil {
		return err
	}
	for range groups {
		if err := r.skipGroup(t); err != nil {
			return err
		}
	}
	return nil
}

func (r *Reader) skipGroup(t byte) error {
	if err := r.skipString("a consumer group's name"); err != nil {
		return err
	}
	meta := 2 // last delivered ID
	if t >= typeStreamListpack2 {
		meta++ // entries read
	}
	if err := r.skipLengths(meta, "a consumer group's metadata"); err != nil {
		return err
	}
	pel, err := r.length("a consumer group's pending count")
	if err != nil {
		return err
	}
	for range pel { // a raw 16-byte ID, the 8-byte delivery time, the delivery count
		if err := r.in.discard(16 + 8); err != nil {
			return r.fail(err, "a pending entry")
		}
		if _, err := r.length("a pending entry's delivery count"); err != nil {
			return err
		}
	}
	consumers, err := r.length("a consumer group's consumer count")
	if err != nil {
		return err
	}
	times := int64(8) // seen time
	if t >= typeStreamListpack3 {
		times += 8 // active time
	}
	for range consumers {
		if err := r.skipString("a consumer's name"); err != nil {
			return err
		}
		if err := r.in.discard(times); err != nil {
			return r.fail(err, "a consumer's seen time")
		}
		owned, err := r.length("a consumer's pending count")
		if err != nil {
			return err
		}
		if owned > 1<<58 {
			return &FormatError{Offset: r.in.offset(), Msg: "a consumer's pending count is larger than any file holds"}
		}
		if err := r.in.discard(int64(owned) * 16); err != nil {
			return r.fail(err, "a consumer's pending IDs")
		}
	}
	return nil
}

func (r *Reader) skipLengths(n int, what string) error {
	for range n {
		if _, err := r.length(what); err != nil {
			return err
		}
	}
	return nil
}
