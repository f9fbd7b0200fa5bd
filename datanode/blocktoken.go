package datanode

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"

	stratov1 "github.com/strato-io/strato/proto/strato/v1"
	"github.com/strato-io/strato/wire"
)

// Block tokens (docs/wire.md §5.9, docs/security.md "Block tokens"). Meta
// tells the datanode, in its Register and Heartbeat replies, whether block
// tokens are required and which keys sign them (SetBlockTokens). When they
// are, every data request needs a grant on its connection: a TOKEN that
// verified with one of those keys, for the request's block (or its whole
// container) and operation, not yet expired.

// blockTokens is what meta said about block tokens. Until it says anything
// tokens are not required, unless the datanode was told so before it
// restarted (Options: the state is kept in its first volume), in which
// case it refuses checked requests with "no keys yet".
type blockTokens struct {
	mu  sync.Mutex // serializes the writers of cur
	cur atomic.Pointer[tokenState]
}

// tokenState is one state of blockTokens, never changed once published:
// every data request reads it without a lock.
type tokenState struct {
	required bool
	heard    bool              // meta gave keys since the start
	keys     map[uint32][]byte // secret: never logged
}

// key returns the key of ID id, nil for an unknown one.
func (t *tokenState) key(id uint32) []byte { return t.keys[id] }

// state is the current state (tokens not required before anything is set).
func (b *blockTokens) state() *tokenState {
	if t := b.cur.Load(); t != nil {
		return t
	}
	return &tokenState{}
}

// SetBlockTokens installs what meta says: whether block tokens are
// required, and the keys that sign valid tokens (by key ID; the map is
// kept, not copied). With required false nothing is checked and TOKEN
// requests are answered without being verified.
func (s *Server) SetBlockTokens(required bool, keys map[uint32][]byte) {
	s.tokens.mu.Lock()
	defer s.tokens.mu.Unlock()
	s.tokens.cur.Store(&tokenState{required: required, heard: true, keys: keys})
}

// requireBlockTokensUntilHeard makes the server refuse checked requests
// ("no keys yet") until SetBlockTokens: a datanode of a cluster that
// required tokens restarts so, since clients know its address before it
// hears from meta again.
func (s *Server) requireBlockTokensUntilHeard() {
	s.tokens.mu.Lock()
	defer s.tokens.mu.Unlock()
	if t := s.tokens.state(); !t.heard {
		s.tokens.cur.Store(&tokenState{required: true, keys: t.keys})
	}
}

// BlockTokensRequired reports whether the server checks block tokens.
func (s *Server) BlockTokensRequired() bool { return s.tokens.state().required }

// grantKey names a grant of a connection: a block (LocalID 0: a container)
// and the ops its token allows.
type grantKey struct {
	block wire.BlockID
	ops   wire.Ops
}

// grant is a verified token's: until when, and its bytes (a pipeline
// leader forwards them to its followers).
type grant struct {
	expires int64 // Unix ms
	token   []byte
}

// grants are a connection's verified tokens: the last wire.MaxGrants, the
// oldest dropped first.
type grants struct {
	mu   sync.Mutex
	m    map[grantKey]grant
	fifo []grantKey
}

func (g *grants) add(t wire.BlockToken, raw []byte) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.m == nil {
		g.m = make(map[grantKey]grant)
	}
	k := grantKey{block: t.Block, ops: t.Ops}
	if old, ok := g.m[k]; ok {
		if old.expires < t.ExpiresUnixMs {
			g.m[k] = grant{expires: t.ExpiresUnixMs, token: bytes.Clone(raw)}
		}
		return
	}
	g.m[k] = grant{expires: t.ExpiresUnixMs, token: bytes.Clone(raw)}
	g.fifo = append(g.fifo, k)
	if len(g.fifo) > wire.MaxGrants {
		delete(g.m, g.fifo[0])
		g.fifo = g.fifo[1:]
	}
}

// find returns a grant of op on block that has not expired at now, looking
// for the block's own and then its container's.
func (g *grants) find(block wire.BlockID, op wire.Ops, now int64) (grant, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	ids := [2]wire.BlockID{block, {ContainerID: block.ContainerID}}
	for _, id := range ids[:1+min(1, int(block.LocalID))] {
		for _, ops := range [2]wire.Ops{op, wire.OpRead | wire.OpWrite} {
			if gr, ok := g.m[grantKey{block: id, ops: ops}]; ok && now < gr.expires {
				return gr, true
			}
		}
	}
	return grant{}, false
}

// anyWrite reports whether a grant of WRITE on any block of container id
// holds at now (what CLOSE_CONTAINER needs).
func (g *grants) anyWrite(id uint64, now int64) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	for k, gr := range g.m {
		if k.block.ContainerID == id && k.ops&wire.OpWrite != 0 && now < gr.expires {
			return true
		}
	}
	return false
}

// errAccessDenied builds an ACCESS_DENIED error.
func errAccessDenied(format string, args ...any) *wire.Error {
	return wire.Errorf(wire.CodeAccessDenied, format, args...)
}

// presentToken handles a TOKEN: it verifies the token and adds its grant
// to the connection. It runs in the connection's reader, before the next
// request is read, so that requests sent right after it (without waiting
// for its answer) find the grant.
func (c *conn) presentToken(ctx context.Context, h wire.FrameHeader, raw []byte) bool {
	st := c.s.tokens.state()
	required, heard, key := st.required, st.heard, st.key
	var err error
	switch {
	case c.chose.Load() == 1:
		// TOKEN is not in version 1 (a frame of version 2 on a
		// connection that chose 1).
		err = wire.Errorf(wire.CodeUnsupportedType, "TOKEN on a connection whose PING chose version 1")
	case !required:
		// Accepted and ignored: nothing is checked.
	case !heard:
		err = errAccessDenied("no keys yet: this datanode has not heard from meta since it started")
	default:
		var t wire.BlockToken
		t, err = wire.VerifyBlockToken(raw, key, c.s.opts.Clock.Now())
		if err != nil {
			err = errAccessDenied("block token refused: %v", err)
		} else {
			c.grants.add(t, raw)
			c.s.m.tokens.Add(1)
		}
	}
	if err != nil {
		c.s.m.tokensRefused.Add(1)
		c.replyError(ctx, h, err)
		return true
	}
	return c.w.WriteMessage(ctx, h.RequestID, &wire.TokenResponse{}, nil) == nil
}

// authorize checks that the connection may make request m, and returns
// the token whose grant allows it (what a pipeline leader forwards; nil
// when tokens are not required). Its error is an ACCESS_DENIED *wire.Error.
func (c *conn) authorize(m wire.Message) ([]byte, error) {
	st := c.s.tokens.state()
	required, heard := st.required, st.heard
	if !required {
		return nil, nil
	}
	var (
		block wire.BlockID
		op    wire.Ops
	)
	switch m := m.(type) {
	case *wire.WriteChunkRequest:
		block, op = m.Block, wire.OpWrite
	case *wire.PutBlockRequest:
		block, op = m.Block, wire.OpWrite
	case *wire.WriteCommitRequest:
		block, op = m.Block, wire.OpWrite
	case *wire.ReadChunkRequest:
		block, op = m.Block, wire.OpRead
	case *wire.ReadLocalRequest:
		block, op = m.Block, wire.OpRead
	case *wire.ReadLocalPathsRequest:
		block, op = m.Block, wire.OpRead
	case *wire.GetBlockRequest:
		block, op = m.Block, wire.OpRead
	case *wire.CloseContainerRequest:
		if !heard {
			return nil, errAccessDenied("no keys yet: no token for CLOSE_CONTAINER of container %d", m.ContainerID)
		}
		if c.grants.anyWrite(m.ContainerID, c.s.opts.Clock.Now().UnixMilli()) {
			return nil, nil
		}
		return nil, errAccessDenied("no token for WRITE of container %d on this connection (CLOSE_CONTAINER)", m.ContainerID)
	case *wire.ImportBeginRequest:
		block, op = wire.BlockID{ContainerID: m.ContainerID}, wire.OpWrite
	case *wire.ListBlocksRequest:
		block, op = wire.BlockID{ContainerID: m.ContainerID}, wire.OpRead
	default:
		return nil, nil // PING, TOKEN, and the frames of an import (IMPORT_BEGIN was checked)
	}
	what := "block " + block.String()
	if block.LocalID == 0 {
		what = fmt.Sprintf("container %d (a container token)", block.ContainerID)
	}
	if !heard {
		return nil, errAccessDenied("no keys yet: no token for %v of %s", op, what)
	}
	gr, ok := c.grants.find(block, op, c.s.opts.Clock.Now().UnixMilli())
	if !ok {
		return nil, errAccessDenied("no token for %v of %s on this connection", op, what)
	}
	return gr.token, nil
}

// blockTokensFile, in each of a datanode's working volumes, exists while
// meta requires block tokens: a datanode restarted then refuses checked
// requests until it hears from meta again, instead of serving them all.
const blockTokensFile = "block-tokens.required"

// setBlockTokens installs what a Register or Heartbeat reply says of block
// tokens (nil: an older meta, which requires none).
func (d *Datanode) setBlockTokens(bt *stratov1.BlockTokenKeys) {
	keys := make(map[uint32][]byte, len(bt.GetKeys()))
	for _, k := range bt.GetKeys() {
		keys[k.GetId()] = k.GetSecret()
	}
	required := bt.GetRequired()
	d.server.SetBlockTokens(required, keys)
	if d.tokensReq.Swap(required) == required && d.tokensKnown.Swap(true) {
		return
	}
	for _, file := range d.tokensFiles {
		var err error
		if required {
			err = os.WriteFile(file, []byte("meta requires block tokens\n"), 0o644)
		} else if err = os.Remove(file); errors.Is(err, os.ErrNotExist) {
			err = nil
		}
		if err != nil {
			d.server.log.Warn("datanode: cannot record whether block tokens are required", "file", file, "err", err)
		}
	}
	d.server.log.Info("datanode: block tokens", "required", required, "keys", len(keys)) // never the keys
}
