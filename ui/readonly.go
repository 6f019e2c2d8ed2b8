package ui

// What the write keys say in a session that cannot write.

// readOnlyHint is all a write key does in a read-only session, and what
// the help says under the disabled write keys: one line at 80 columns.
const readOnlyHint = "read-only: writes are off (start with --write, or writes: true in the profile)"

// snapshotHint is what a write key does on a snapshot.
const snapshotHint = "a snapshot: nothing to write to — Y copies the marked rows as --from-file lines pinned to the file, for a guarded write on the live server"

// streamsSnapshotHint is what the Streams screen's write keys do on a
// snapshot: pending entries live on the server only.
const streamsSnapshotHint = "a snapshot: pending entries are read and written on the live server (idemctl streams retry, ack, dead-letter)"

// offHint is readOnlyHint as the screen shows it: on the Streams screen
// (streams), or another.
func (c *common) offHint(streams bool) string {
	if c.opts.Scan.Snapshot != nil && streams {
		return streamsSnapshotHint
	}
	if c.opts.Scan.Snapshot != nil {
		return snapshotHint
	}
	return readOnlyHint
}

// offNote is readOnlyHint as the footer says it, beside the write keys it
// names: on the Streams screen (streams), or another.
func (c *common) offNote(streams bool) string {
	if c.opts.Scan.Snapshot != nil && streams {
		return "off: a snapshot"
	}
	if c.opts.Scan.Snapshot != nil {
		return "off: a snapshot (Y copies)"
	}
	return "off: start with --write"
}
