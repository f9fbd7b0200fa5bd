package client

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"sync"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/strato-io/strato/checksum"
	"github.com/strato-io/strato/proto/strato/v1"
	"github.com/strato-io/strato/wire"
)

// dataConns keeps one data-protocol connection per datanode address, dialed
// on first use and again after it broke. Requests are pipelined on it.
type dataConns struct {
	tls    *tls.Config // nil: plain TCP
	mu     sync.Mutex
	conns  connSet
	closed bool
	// Local reads (local.go): connections to the local sockets of this
	// host's datanodes, and the addresses found to have none, until when.
	localReads bool
	local      connSet
	noLocal    map[string]time.Time
}

// connSet is a set of connections by address, and the dials in progress:
// the callers that need a connection being dialed wait for that dial
// rather than make their own (a writer's first chunks go out at once).
type connSet struct {
	conns   map[string]*wire.Conn
	dialing map[string]*dialing
}

// dialing is a dial in progress; done is closed when conn or err is set.
type dialing struct {
	done chan struct{}
	conn *wire.Conn
	err  error
}

func newConnSet() connSet {
	return connSet{conns: map[string]*wire.Conn{}, dialing: map[string]*dialing{}}
}

func newDataConns(tlsConfig *tls.Config, localReads bool) *dataConns {
	return &dataConns{tls: tlsConfig, conns: newConnSet(), localReads: localReads,
		local: newConnSet(), noLocal: map[string]time.Time{}}
}

// errClientClosed: the client was closed.
var errClientClosed = errors.New("client: closed")

func (d *dataConns) get(ctx context.Context, addr string) (*wire.Conn, error) {
	return d.cached(ctx, &d.conns, addr, func(ctx context.Context) (*wire.Conn, error) {
		return wire.Dial(ctx, addr, wire.ConnOptions{TLS: d.tls})
	})
}

// cached returns set's connection to addr, made with dial when there is
// none or it broke. One dial runs at a time per address, whoever asked
// first, and every caller waits for its outcome as long as its own context
// allows: the dial does not end with the context of the caller that
// started it (wire's DialTimeout bounds it).
func (d *dataConns) cached(ctx context.Context, set *connSet, addr string, dial func(context.Context) (*wire.Conn, error)) (*wire.Conn, error) {
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		return nil, errClientClosed
	}
	if c := set.conns[addr]; c != nil && c.Err() == nil {
		d.mu.Unlock()
		return c, nil
	}
	dl := set.dialing[addr]
	if dl == nil {
		dl = &dialing{done: make(chan struct{})}
		set.dialing[addr] = dl
		go d.dial(context.WithoutCancel(ctx), set, addr, dl, dial)
	}
	d.mu.Unlock()
	select {
	case <-dl.done:
		return dl.conn, dl.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// dial makes the connection dl waits for and keeps it in set.
func (d *dataConns) dial(ctx context.Context, set *connSet, addr string, dl *dialing, dial func(context.Context) (*wire.Conn, error)) {
	c, err := dial(ctx)
	d.mu.Lock()
	delete(set.dialing, addr)
	if err == nil && d.closed {
		_ = c.Close()
		c, err = nil, errClientClosed
	}
	if err == nil {
		set.conns[addr] = c
	}
	d.mu.Unlock()
	dl.conn, dl.err = c, err
	close(dl.done)
}

func (d *dataConns) close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.closed = true
	var errs []error
	for _, m := range []map[string]*wire.Conn{d.conns.conns, d.local.conns} {
		for a, c := range m {
			if err := c.Close(); err != nil && !errors.Is(err, wire.ErrConnClosed) {
				errs = append(errs, err)
			}
			delete(m, a)
		}
	}
	return errors.Join(errs...)
}

// ErrAccessDenied: a datanode refused a data request for want of a valid
// block token (docs/wire.md §5.9: ACCESS_DENIED; none presented, expired,
// or not allowing the operation). It is also ErrPermission, and
// errors.Is(err, wire.CodeAccessDenied) holds. It is not a fault of the
// datanode: a reader does not try the other replicas for it, and returns
// it (a reader open longer than the tokens' lifetime, 10h by default, gets
// it: open the key again for new tokens); a writer moves to a new block,
// whose allocation brings a new token, and gives up after a few denials.
var ErrAccessDenied = errors.New("client: datanode denied access (block token)")

// accessDenied is an ACCESS_DENIED error of a datanode, as the data path
// returns it.
type accessDenied struct{ err error }

func (e *accessDenied) Error() string { return "client: access denied: " + e.err.Error() }
func (e *accessDenied) Unwrap() error { return e.err }
func (e *accessDenied) Is(target error) bool {
	return target == ErrAccessDenied || target == ErrPermission
}

// dataErr classifies an error of a data request.
func dataErr(err error) error {
	if err != nil && wire.CodeOf(err) == wire.CodeAccessDenied {
		return &accessDenied{err: err}
	}
	return err
}

// getFor returns the connection to addr with token (the block's
// BlockLocation.token, docs/wire.md §5.9) presented on it: once per
// connection and token (wire.Conn.Authorize), before the block's first
// request there.
func (d *dataConns) getFor(ctx context.Context, addr string, token []byte) (*wire.Conn, error) {
	c, err := d.get(ctx, addr)
	if err != nil {
		return nil, err
	}
	if err := c.Authorize(ctx, token); err != nil {
		return nil, dataErr(err)
	}
	return c, nil
}

func (d *dataConns) writeChunk(ctx context.Context, addr string, token []byte, req *wire.WriteChunkRequest, data []byte) error {
	c, err := d.getFor(ctx, addr, token)
	if err != nil {
		return err
	}
	return dataErr(c.WriteChunk(ctx, req, data))
}

func (d *dataConns) putBlock(ctx context.Context, addr string, token []byte, req *wire.PutBlockRequest) (*wire.PutBlockResponse, error) {
	c, err := d.getFor(ctx, addr, token)
	if err != nil {
		return nil, err
	}
	resp, err := c.PutBlock(ctx, req)
	return resp, dataErr(err)
}

func (d *dataConns) writeCommit(ctx context.Context, addr string, token []byte, req *wire.WriteCommitRequest, data []byte) (*wire.WriteCommitResponse, error) {
	c, err := d.getFor(ctx, addr, token)
	if err != nil {
		return nil, err
	}
	resp, err := c.WriteCommit(ctx, req, data)
	return resp, dataErr(err)
}

func (d *dataConns) readChunk(ctx context.Context, addr string, token []byte, req *wire.ReadChunkRequest, buf []byte) (*wire.ReadChunkResponse, []byte, error) {
	c, err := d.getFor(ctx, addr, token)
	if err != nil {
		return nil, nil, err
	}
	// Verified as it arrives (wire.Conn.ReadChunkVerified): each piece is
	// checksummed while still in the CPU's cache.
	resp, p, err := c.ReadChunkVerified(ctx, req, buf)
	return resp, p, dataErr(err)
}

// checksumType converts the namespace's checksum type to the data path's.
func checksumType(t stratov1.ChecksumType) (checksum.Type, error) {
	switch t {
	case stratov1.ChecksumType_CHECKSUM_NONE:
		return checksum.NONE, nil
	case stratov1.ChecksumType_CHECKSUM_CRC32:
		return checksum.CRC32, nil
	case stratov1.ChecksumType_CHECKSUM_CRC32C, stratov1.ChecksumType_CHECKSUM_TYPE_UNSPECIFIED:
		return checksum.CRC32C, nil
	case stratov1.ChecksumType_CHECKSUM_SHA256:
		return checksum.SHA256, nil
	case stratov1.ChecksumType_CHECKSUM_MD5:
		return checksum.MD5, nil
	}
	return 0, fmt.Errorf("client: unknown checksum type %v", t)
}

func wireBlock(id *stratov1.BlockID) wire.BlockID {
	return wire.BlockID{ContainerID: id.GetContainerId(), LocalID: id.GetLocalId()}
}

// retryMeta runs fn until it succeeds, fails with an error other than
// "unavailable", or ctx ends: meta restarting or electing a leader is
// waited out. fn must be safe to repeat.
func retryMeta(ctx context.Context, fn func(context.Context) error) error {
	backoff := 50 * time.Millisecond
	deadline := time.Now().Add(60 * time.Second)
	for {
		err := fn(ctx)
		if err == nil || !metaUnavailable(err) || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, time.Second)
	}
}

func metaUnavailable(err error) bool {
	st, ok := status.FromError(err)
	return ok && (st.Code() == codes.Unavailable || st.Code() == codes.DeadlineExceeded)
}
