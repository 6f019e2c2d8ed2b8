// Package streams reads the consumer groups of stream keyspaces (a
// keyspace of kind: stream): the streams SCAN finds on every primary,
// each group's consumers and pending entries judged stale or poison
// against the server's clock, and one entry's fields read under caps by
// a read-only script. It never writes: claiming, acknowledging or
// dead-lettering an entry is a write of actions.
//
// Floor 1 of ARCHITECTURE.md, the read engine: it may import inspect and
// the foundations (floor 0), never the write path, a screen or the
// command layer.
package streams
