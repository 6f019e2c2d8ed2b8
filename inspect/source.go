package inspect

import "time"

// Source says where a report's records came from, and the clock their
// TTLs, ages and staleness were judged by.
type Source struct {
	Kind       string     `json:"kind"` // server | snapshot
	Address    string     `json:"address,omitempty"`
	File       string     `json:"file,omitempty"`
	Server     string     `json:"server,omitempty"` // what wrote the snapshot, e.g. "Redis 7.0.15"
	RDBVersion int        `json:"rdb_version,omitempty"`
	DB         *int       `json:"db,omitempty"`
	Taken      *time.Time `json:"taken,omitempty"` // the snapshot's ctime
	At         *time.Time `json:"at,omitempty"`    // the time records were judged at
	// Clock: "server" (the server's TIME at each batch), "snapshot" (its
	// ctime) or "--at".
	Clock    string `json:"clock"`
	Checksum string `json:"checksum,omitempty"`
}

// ServerSource is a live server's.
func ServerSource(address string) *Source {
	return &Source{Kind: "server", Address: address, Clock: "server"}
}
