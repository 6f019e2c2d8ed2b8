// Package faultproxy is a TCP proxy for tests that can lose traffic on
// command: it forwards a loopback port to a server (a real redis-server) and
// can drop the bytes of one direction or both without closing anything, so a
// client sees a timeout, or cut every connection at once. With replies
// dropped a command still reaches the server and runs there, but its answer
// never comes back: the case a client cannot tell from a lost request.
//
// A test kit (ARCHITECTURE.md): imported by tests (and the bench harness)
// only; it may import any product package.
package faultproxy

import (
	"context"
	"errors"
	"net"
	"sync"
	"sync/atomic"
)

// Mode says which bytes the proxy forwards.
type Mode int32

const (
	Forward      Mode = iota // everything passes
	DropRequests             // client→server bytes are discarded: commands never reach the server
	DropReplies              // server→client bytes are discarded: commands run, answers are lost
	Blackhole                // both directions are discarded; connections stay open
)

func (m Mode) String() string {
	switch m {
	case Forward:
		return "forward"
	case DropRequests:
		return "drop-requests"
	case DropReplies:
		return "drop-replies"
	case Blackhole:
		return "blackhole"
	}
	return "unknown"
}

func (m Mode) drops(toServer bool) bool {
	switch m {
	case Blackhole:
		return true
	case DropRequests:
		return toServer
	case DropReplies:
		return !toServer
	}
	return false
}

// Proxy forwards connections from Addr() to a target address.
type Proxy struct {
	ln     net.Listener
	target string
	mode   atomic.Int32

	mu     sync.Mutex
	conns  map[net.Conn]struct{}
	closed bool
	wg     sync.WaitGroup

	droppedReq, droppedRep atomic.Int64
	sentReq, sentRep       atomic.Int64 // bytes forwarded each way
	accepted               atomic.Int64
	dropMu                 sync.Mutex
	dropped                chan struct{} // closed (and replaced) whenever bytes are dropped
}

// Start listens on a free loopback port and forwards to target.
func Start(target string) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &Proxy{ln: ln, target: target, conns: map[net.Conn]struct{}{}, dropped: make(chan struct{})}
	p.wg.Add(1)
	go p.accept()
	return p, nil
}

// Addr is the proxy's host:port.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// SetMode changes what is forwarded, for open and future connections alike.
func (p *Proxy) SetMode(m Mode) { p.mode.Store(int32(m)) }

// Mode is the current mode.
func (p *Proxy) Mode() Mode { return Mode(p.mode.Load()) }

// Blackhole stops forwarding in both directions without closing anything:
// clients time out.
func (p *Proxy) Blackhole() { p.SetMode(Blackhole) }

// DropReplies lets commands through to the server but discards its answers.
func (p *Proxy) DropReplies() { p.SetMode(DropReplies) }

// DropRequests discards what clients send; the server sees nothing.
func (p *Proxy) DropRequests() { p.SetMode(DropRequests) }

// Resume forwards everything again. Bytes dropped meanwhile stay lost.
func (p *Proxy) Resume() { p.SetMode(Forward) }

// Dropped reports how many bytes were discarded in each direction.
func (p *Proxy) Dropped() (requests, replies int64) {
	return p.droppedReq.Load(), p.droppedRep.Load()
}

// Accepted is the number of client connections accepted so far.
func (p *Proxy) Accepted() int64 { return p.accepted.Load() }

// Forwarded returns the bytes passed each way: tests bound what a client
// fetched from the server.
func (p *Proxy) Forwarded() (requests, replies int64) { return p.sentReq.Load(), p.sentRep.Load() }

// WaitDropped blocks until at least n bytes have been dropped in the given
// direction (toServer: requests, else replies), or ctx ends.
func (p *Proxy) WaitDropped(ctx context.Context, toServer bool, n int64) error {
	counter := &p.droppedRep
	if toServer {
		counter = &p.droppedReq
	}
	for {
		p.dropMu.Lock()
		ch := p.dropped
		p.dropMu.Unlock()
		if counter.Load() >= n {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// CutConnections closes every open connection (both ends) and keeps
// listening; it returns how many client connections it cut.
func (p *Proxy) CutConnections() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for c := range p.conns {
		_ = c.Close()
		n++
	}
	clear(p.conns)
	return n / 2
}

// Close stops listening and cuts every connection: new dials are refused.
func (p *Proxy) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	p.mu.Unlock()
	err := p.ln.Close()
	p.CutConnections()
	p.wg.Wait()
	return err
}

func (p *Proxy) accept() {
	defer p.wg.Done()
	for {
		client, err := p.ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			continue
		}
		p.accepted.Add(1)
		server, err := net.Dial("tcp", p.target)
		if err != nil {
			_ = client.Close()
			continue
		}
		if !p.track(client, server) {
			return
		}
		p.wg.Add(2)
		go p.pipe(client, server, true)
		go p.pipe(server, client, false)
	}
}

// track registers a connection pair unless the proxy is closing.
func (p *Proxy) track(a, b net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		_ = a.Close()
		_ = b.Close()
		return false
	}
	p.conns[a], p.conns[b] = struct{}{}, struct{}{}
	return true
}

func (p *Proxy) untrack(a, b net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.conns, a)
	delete(p.conns, b)
}

// pipe copies src to dst, discarding what the mode drops. When either side
// ends, both are closed.
func (p *Proxy) pipe(src, dst net.Conn, toServer bool) {
	defer p.wg.Done()
	defer func() {
		_ = src.Close()
		_ = dst.Close()
		p.untrack(src, dst)
	}()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if p.Mode().drops(toServer) {
				p.noteDrop(toServer, n)
			} else if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			} else if toServer {
				p.sentReq.Add(int64(n))
			} else {
				p.sentRep.Add(int64(n))
			}
		}
		if err != nil {
			return
		}
	}
}

func (p *Proxy) noteDrop(toServer bool, n int) {
	if toServer {
		p.droppedReq.Add(int64(n))
	} else {
		p.droppedRep.Add(int64(n))
	}
	p.dropMu.Lock()
	close(p.dropped)
	p.dropped = make(chan struct{})
	p.dropMu.Unlock()
}
