package actions

import (
	"errors"
	"fmt"
	"sync"
)

// ErrReadOnly refuses every write while writes are off.
var ErrReadOnly = errors.New("writes are disabled: this profile is read-only (enable with --write, or writes: true in the profile)")

// ErrNeedsProfileName asks the operator to type a protected profile's name.
var ErrNeedsProfileName = errors.New("this profile is protected: type its name to allow writes for this session")

// Policy is the write policy of a session. It lives in actions/, not the UI,
// so no caller can write around it.
type Policy struct {
	Writes    bool
	Protected bool
	Profile   string

	mu        sync.Mutex
	confirmed bool
}

// Check says whether a write may run now.
func (p *Policy) Check() error {
	if p == nil || !p.Writes {
		return ErrReadOnly
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.Protected && !p.confirmed {
		return ErrNeedsProfileName
	}
	return nil
}

// NeedsProfileName reports whether the operator must still type the name.
func (p *Policy) NeedsProfileName() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.Writes && p.Protected && !p.confirmed
}

// ConfirmProfile unlocks a protected profile for the rest of the session
// when typed is its exact name.
func (p *Policy) ConfirmProfile(typed string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if typed != p.Profile || p.Profile == "" {
		return fmt.Errorf("that is not the profile's name; writes stay locked")
	}
	p.confirmed = true
	return nil
}
