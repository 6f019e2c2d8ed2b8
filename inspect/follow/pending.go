package follow

import (
	"fmt"
	"sync"
	"sync/atomic"
)

// pending is what the watch connections learned and the follower has not
// acted on yet: the changed keys (a set, so a key changed many times
// within a coalescing window is read once) and the first reason the view
// may be missing changes. Bounded: past max keys it gives the keys up for
// a re-sync.
type pending struct {
	mu     sync.Mutex
	keys   map[string]struct{}
	reason string // non-empty: re-sync
	max    int
	wake   chan struct{} // a reason was set
	events atomic.Int64  // changed keys reported, for Stats
}

func newPending(max int) *pending {
	return &pending{keys: make(map[string]struct{}), max: max, wake: make(chan struct{}, 1)}
}

func (p *pending) changed(keys []string) {
	p.events.Add(int64(len(keys)))
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, k := range keys {
		p.keys[k] = struct{}{}
	}
	if len(p.keys) > p.max {
		p.keys = make(map[string]struct{})
		p.setReason(fmt.Sprintf("more than %d changed keys waited to be read", p.max))
	}
}

func (p *pending) missed(addr, reason string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.setReason(addr + ": " + reason)
}

func (p *pending) setReason(r string) {
	if p.reason == "" {
		p.reason = r
	}
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// takeKeys hands over the changed keys.
func (p *pending) takeKeys() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.keys) == 0 {
		return nil
	}
	out := make([]string, 0, len(p.keys))
	for k := range p.keys {
		out = append(out, k)
	}
	clear(p.keys)
	return out
}

// need is the pending re-sync's reason ("" none).
func (p *pending) need() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.reason
}

// startResync clears the reason and the keys a full pass will read
// anyway; what changes from now on waits for after the pass.
func (p *pending) startResync() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	r := p.reason
	p.reason = ""
	clear(p.keys)
	return r
}
