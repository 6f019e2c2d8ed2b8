package common

// What the write keys say in a session that cannot write.

// ReadOnlyHint is all a write key does in a read-only session, and what
// the help says under the disabled write keys: one line at 80 columns.
const ReadOnlyHint = "read-only: writes are off (start with --write, or writes: true in the profile)"

// SnapshotHint is what a write key does on a snapshot.
const SnapshotHint = "a snapshot: nothing to write to — Y copies the marked rows as --from-file lines pinned to the file, for a guarded write on the live server"

// StreamsSnapshotHint is what the Streams screen's write keys do on a
// snapshot: pending entries live on the server only.
const StreamsSnapshotHint = "a snapshot: pending entries are read and written on the live server (idemctl streams retry, ack, dead-letter)"

// OffHint is ReadOnlyHint as the screen shows it: on the Streams screen
// (streams), or another.
func (c *Common) OffHint(streams bool) string {
	if c.Opts.Scan.Snapshot != nil && streams {
		return StreamsSnapshotHint
	}
	if c.Opts.Scan.Snapshot != nil {
		return SnapshotHint
	}
	return ReadOnlyHint
}

// OffNote is ReadOnlyHint as the footer says it, beside the write keys it
// names: on the Streams screen (streams), or another.
func (c *Common) OffNote(streams bool) string {
	if c.Opts.Scan.Snapshot != nil && streams {
		return "off: a snapshot"
	}
	if c.Opts.Scan.Snapshot != nil {
		return "off: a snapshot (Y copies)"
	}
	return "off: start with --write"
}
