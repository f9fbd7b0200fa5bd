package wire

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// PoolOptions configure a Pool. The zero value is usable: EnsureDefaults
// fills every unset field.
type PoolOptions struct {
	// Conn configures every connection.
	Conn ConnOptions
	// ConnsPerAddr is how many connections the pool keeps to one address.
	// A connection multiplexes any number of requests; a few of them let
	// large frames to one datanode go out in parallel. Default: 2.
	ConnsPerAddr int
	// IdleTimeout closes connections that carried no request for that long
	// (shorter than the datanode's own idle timeout, so that the client
	// closes first). Default: 1 minute.
	IdleTimeout time.Duration
}

// Default values of PoolOptions.
const (
	DefaultConnsPerAddr    = 2
	DefaultPoolIdleTimeout = time.Minute
)

// EnsureDefaults fills unset fields with their defaults.
func (o *PoolOptions) EnsureDefaults() {
	o.Conn.EnsureDefaults()
	if o.ConnsPerAddr == 0 {
		o.ConnsPerAddr = DefaultConnsPerAddr
	}
	if o.IdleTimeout == 0 {
		o.IdleTimeout = DefaultPoolIdleTimeout
	}
}

// Validate reports the first invalid field.
func (o *PoolOptions) Validate() error {
	if err := o.Conn.Validate(); err != nil {
		return err
	}
	switch {
	case o.ConnsPerAddr < 1:
		return fmt.Errorf("wire: ConnsPerAddr %d must be at least 1", o.ConnsPerAddr)
	case o.IdleTimeout < 0:
		return fmt.Errorf("wire: negative IdleTimeout %v", o.IdleTimeout)
	}
	return nil
}

// ErrPoolClosed is returned by Get after Close.
var ErrPoolClosed = errors.New("wire: pool closed")

// Pool keeps a few multiplexed connections per datanode address. Get
// returns a shared connection: callers do not return it, and never close
// it. Connections that broke are dropped and replaced on the next Get;
// idle ones are closed after IdleTimeout. Safe for concurrent use.
type Pool struct {
	opts PoolOptions

	mu     sync.Mutex
	addrs  map[string]*poolEntry
	closed bool

	stop chan struct{}
	wg   sync.WaitGroup
}

type poolEntry struct {
	conns   []*Conn
	dialing int
	dialed  chan struct{} // closed and replaced whenever a dial ends
}

// NewPool returns an empty pool.
func NewPool(opts PoolOptions) (*Pool, error) {
	opts.EnsureDefaults()
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	p := &Pool{opts: opts, addrs: make(map[string]*poolEntry), stop: make(chan struct{})}
	p.wg.Add(1)
	go p.reapLoop()
	return p, nil
}

// Get returns a connection to addr: the least busy of the pool's, or a new
// one while there are fewer than ConnsPerAddr and all are busy.
func (p *Pool) Get(ctx context.Context, addr string) (*Conn, error) {
	p.mu.Lock()
	for {
		if p.closed {
			p.mu.Unlock()
			return nil, ErrPoolClosed
		}
		e := p.addrs[addr]
		if e == nil {
			e = &poolEntry{dialed: make(chan struct{})}
			p.addrs[addr] = e
		}
		e.prune()
		var best *Conn
		for _, c := range e.conns {
			if best == nil || c.InFlight() < best.InFlight() {
				best = c
			}
		}
		room := len(e.conns)+e.dialing < p.opts.ConnsPerAddr
		if best != nil && (best.InFlight() == 0 || !room) {
			best.lastUsed.Store(time.Now().UnixNano())
			p.mu.Unlock()
			return best, nil
		}
		if room {
			e.dialing++
			p.mu.Unlock()
			c, err := Dial(ctx, addr, p.opts.Conn)
			p.mu.Lock()
			e.dialing--
			close(e.dialed)
			e.dialed = make(chan struct{})
			if err != nil {
				p.mu.Unlock()
				return nil, err
			}
			if p.closed {
				p.mu.Unlock()
				_ = c.Close()
				return nil, ErrPoolClosed
			}
			e.conns = append(e.conns, c)
			p.mu.Unlock()
			return c, nil
		}
		// No connection yet and the dials allowed are under way: wait for
		// one to end.
		wait := e.dialed
		p.mu.Unlock()
		select {
		case <-wait:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		p.mu.Lock()
	}
}

// prune drops closed connections.
func (e *poolEntry) prune() {
	live := e.conns[:0]
	for _, c := range e.conns {
		if c.Err() == nil {
			live = append(live, c)
		}
	}
	clear(e.conns[len(live):])
	e.conns = live
}

func (p *Pool) reapLoop() {
	defer p.wg.Done()
	t := time.NewTicker(max(p.opts.IdleTimeout/2, time.Millisecond))
	defer t.Stop()
	for {
		select {
		case <-p.stop:
			return
		case <-t.C:
			p.reap(time.Now().Add(-p.opts.IdleTimeout).UnixNano())
		}
	}
}

// reap closes connections idle since before cutoff.
func (p *Pool) reap(cutoff int64) {
	var idle []*Conn
	p.mu.Lock()
	for addr, e := range p.addrs {
		e.prune()
		live := e.conns[:0]
		for _, c := range e.conns {
			if c.InFlight() == 0 && c.lastUsed.Load() < cutoff {
				idle = append(idle, c)
			} else {
				live = append(live, c)
			}
		}
		clear(e.conns[len(live):])
		e.conns = live
		if len(e.conns) == 0 && e.dialing == 0 {
			delete(p.addrs, addr)
		}
	}
	p.mu.Unlock()
	for _, c := range idle {
		_ = c.Close()
	}
}

// Close closes every connection; requests in flight on them fail.
func (p *Pool) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	var all []*Conn
	for _, e := range p.addrs {
		all = append(all, e.conns...)
	}
	p.addrs = nil
	p.mu.Unlock()
	close(p.stop)
	p.wg.Wait()
	for _, c := range all {
		_ = c.Close()
	}
	return nil
}
