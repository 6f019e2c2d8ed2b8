// Package redisconn turns what an operator types (a URL or host:port, a
// password source, TLS and topology settings) into a checked go-redis
// client, and explains a failed connection in one line with the fix.
// It knows nothing of flags or exit codes: its errors say whether the
// input or the connection was at fault, and the command layer maps that.
//
// Floor 0 of ARCHITECTURE.md, a foundation: it imports no idemctl package
// but other foundations.
package redisconn

// Kind says whose fault an Error is.
type Kind int

const (
	// KindInput is a bad URL, password source or setting: the user's to fix.
	KindInput Kind = iota + 1
	// KindConnect is a server that cannot be reached or refused us.
	KindConnect
)

// Error is a one-line message for people, never holding a secret.
type Error struct {
	Kind Kind
	Msg  string
}

func (e *Error) Error() string { return e.Msg }

func inputErr(msg string) error   { return &Error{Kind: KindInput, Msg: msg} }
func connectErr(msg string) error { return &Error{Kind: KindConnect, Msg: msg} }
