package datanode

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/strato-io/strato/checksum"
	"github.com/strato-io/strato/datanode/container"
	"github.com/strato-io/strato/reqid"
	"github.com/strato-io/strato/wire"
)

// handle runs one request and writes its response. It runs in the
// request's own goroutine; responses go out in completion order.
func (c *conn) handle(ctx context.Context, h wire.FrameHeader, m wire.Message, payload []byte, check arrival) {
	var (
		resp wire.Message
		err  error
	)
	obs, debug := c.s.opts.Observe, c.s.log.Enabled(ctx, slog.LevelDebug)
	var span trace.Span
	if c.s.tracer != nil {
		ctx, span = c.s.tracer.Start(ctx, "datanode "+h.Type.String(), trace.WithSpanKind(trace.SpanKindServer),
			trace.WithAttributes(attribute.String("strato.datanode", c.s.opts.ID)))
	}
	if obs != nil || debug || span != nil {
		start := time.Now()
		defer func() {
			var code wire.Code
			if err != nil {
				code = toWire(err).Code
			}
			d := time.Since(start)
			if obs != nil {
				obs(h.Type, code, d)
			}
			if debug {
				// The request log: at debug level, one line a request.
				outcome := "OK"
				if err != nil {
					outcome = code.String()
				}
				c.s.log.Debug("datanode: request", "remote", c.remote, "type", h.Type.String(), "id", h.RequestID,
					"request_id", reqid.From(ctx), "code", outcome, "ms", float64(d.Microseconds())/1000)
			}
			if span != nil {
				if err != nil {
					span.SetStatus(codes.Error, code.String())
				}
				span.End()
			}
		}()
	}
	token, err := c.authorize(m)
	if err != nil {
		c.s.m.tokensRefused.Add(1)
		c.replyError(ctx, h, err)
		return
	}
	switch m.(type) {
	case *wire.WriteChunkRequest, *wire.WriteCommitRequest, *wire.PutBlockRequest,
		*wire.ReadChunkRequest, *wire.ReadLocalRequest, *wire.ReadLocalPathsRequest:
		// A client's request: background copies give way (decision 0098).
		c.s.opts.Foreground.Touch()
	}
	switch m := m.(type) {
	case *wire.WriteChunkRequest:
		c.s.m.bytesIn.Add(int64(len(payload)))
		_, err = c.s.writeChunk(ctx, m, nil, payload, check, c.peer.Load(), token)
		resp = &wire.WriteChunkResponse{}
	case *wire.WriteCommitRequest:
		c.s.m.bytesIn.Add(int64(len(payload)))
		r := &wire.WriteCommitResponse{}
		r.BCSID, err = c.s.writeChunk(ctx, m.Write(), m, payload, check, c.peer.Load(), token)
		resp = r
	case *wire.PutBlockRequest:
		resp, err = c.s.putBlock(ctx, m, token)
	case *wire.ReadChunkRequest:
		err = c.readChunk(ctx, h, m)
		if err == nil {
			return // the response is out
		}
	case *wire.ReadLocalRequest:
		err = c.readLocal(ctx, h, m)
		if err == nil {
			return // the response is out
		}
	case *wire.ReadLocalPathsRequest:
		err = c.readLocalPaths(ctx, h, m)
		if err == nil {
			return // the response is out
		}
	case *wire.GetBlockRequest:
		resp, err = c.s.getBlock(m)
	case *wire.CloseContainerRequest:
		resp, err = c.s.closeContainer(m)
	case *wire.ListBlocksRequest:
		resp, err = c.s.listBlocks(m)
	case *wire.ImportDataRequest, *wire.ImportCommitRequest, *wire.ImportAbortRequest, *wire.ImportIndexRequest:
		err = wire.Errorf(wire.CodeBadState, "%v outside an import (IMPORT_BEGIN first)", h.Type)
	default:
		err = wire.Errorf(wire.CodeUnsupportedType, "%v requests are not served", h.Type)
	}
	if err != nil {
		c.replyError(ctx, h, err)
		return
	}
	if err := c.w.WriteMessage(ctx, h.RequestID, resp, nil); err != nil {
		c.writeFailed(h, err)
	}
}

// replyError answers a request with err as an error response.
func (c *conn) replyError(ctx context.Context, h wire.FrameHeader, err error) {
	c.s.m.errors.Add(1)
	e := toWire(err)
	lvl := c.s.log.Debug
	switch e.Code {
	case wire.CodeIO, wire.CodeCorrupt, wire.CodeInternal, wire.CodeNoSpace, wire.CodeFollowerFailed:
		lvl = c.s.log.Warn
	}
	lvl("datanode: request failed", "remote", c.remote, "type", h.Type, "id", h.RequestID, "request_id", reqid.From(ctx),
		"code", e.Code.String(), "err", e.Message)
	if e.Code == wire.CodeIO {
		// Perhaps its disk's: check the volumes (a failed one is taken out
		// of service, health.go).
		c.s.store.CheckVolumesSoon()
	}
	if err := c.w.WriteError(ctx, h.Type, h.RequestID, e); err != nil {
		c.writeFailed(h, err)
	}
}

// writeFailed closes a connection whose response could not be written
// whole: its stream is broken (or the client is gone).
func (c *conn) writeFailed(h wire.FrameHeader, err error) {
	if errors.Is(err, wire.ErrWriterBroken) || !errors.Is(err, context.Canceled) {
		c.s.log.Debug("datanode: response not sent; closing the connection", "remote", c.remote, "type", h.Type, "id", h.RequestID, "err", err)
	}
	_ = c.nc.Close()
}

// toWire turns an error of the store (or of the pipeline) into an error
// response.
func toWire(err error) *wire.Error {
	var e *wire.Error
	if errors.As(err, &e) {
		return e
	}
	return &wire.Error{Code: codeOf(err), Message: err.Error()}
}

// codeOf classifies an error of the container store.
func codeOf(err error) wire.Code {
	switch {
	case errors.Is(err, container.ErrNotFound):
		return wire.CodeContainerNotFound
	case errors.Is(err, container.ErrBlockNotFound):
		return wire.CodeBlockNotFound
	case errors.Is(err, container.ErrNotOpen):
		return wire.CodeContainerNotOpen
	case errors.Is(err, container.ErrBadState):
		return wire.CodeBadState
	case errors.Is(err, container.ErrChecksum):
		return wire.CodeChecksumMismatch
	case errors.Is(err, container.ErrOverwrite):
		return wire.CodeOverwrite
	case errors.Is(err, container.ErrIncomplete):
		return wire.CodeIncomplete
	case errors.Is(err, container.ErrChunkTooLarge), errors.Is(err, container.ErrBlockTooLarge):
		return wire.CodeTooLarge
	case errors.Is(err, container.ErrDiskFull):
		return wire.CodeNoSpace
	case errors.Is(err, container.ErrCorrupt):
		return wire.CodeCorrupt
	case errors.Is(err, container.ErrExists):
		return wire.CodeContainerExists
	case errors.Is(err, container.ErrInvalid), errors.Is(err, container.ErrInvalidID):
		return wire.CodeInvalidArgument
	case errors.Is(err, container.ErrClosed), errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return wire.CodeUnavailable
	}
	return wire.CodeIO
}

// writeChunk writes a chunk locally and, for a pipeline leader, on every
// follower in parallel. A leader verifies the checksums before forwarding
// anything (hardware CRC32C costs well under a millisecond for 4 MiB), so
// that a chunk damaged between client and leader fails the request alone,
// without followers to blame; followers verify again what they receive.
// check is what reading the payload found (readVerified): a chunk checked
// as it arrived is not checked again, and one that arrived as pass records
// goes to each follower as those records when its connection takes them.
//
// With commit (a WRITE_COMMIT, whose chunk m is), every replica then
// commits the block at the chunk's end, as putBlock does, and writeChunk
// returns this datanode's bcsID.
//
// token is the block token of the client's grant (nil when tokens are not
// required): the leader presents it to each follower, once per connection,
// before the first request of the block it forwards there.
func (s *Server) writeChunk(ctx context.Context, m *wire.WriteChunkRequest, commit *wire.WriteCommitRequest, data []byte,
	check arrival, fromPeer bool, token []byte) (bcsID uint64, err error) {
	// What readers read first goes through the page cache, so that a read
	// soon after the write finds the block in memory: the pipeline
	// leader's copy (the replica with followers: members are listed leader
	// first), the only replica of a ONE block, an erasure coded data
	// member's cells (a client writes each member itself; parity members,
	// read only to rebuild, skip the cache once meta's placement says
	// which they are). The followers' copies,
	// forwarded by another datanode and there for durability, skip the
	// cache (O_DIRECT where the store allows it); with NoWriteCache, every
	// copy does.
	opts := container.WriteOptions{Cache: !s.opts.NoWriteCache && (len(m.Followers) > 0 || !fromPeer)}
	switch {
	case check.done:
		// Checked as it arrived (readVerified).
		if check.err != nil {
			return 0, fmt.Errorf("%w: block %v at %d: %w", container.ErrChecksum, m.Block, m.Offset, check.err)
		}
		opts.NoVerify = true
	case len(m.Followers) > 0:
		if err := checksum.Verify(m.Checksums, 0, data); err != nil {
			return 0, fmt.Errorf("%w: block %v at %d: %w", container.ErrChecksum, m.Block, m.Offset, err)
		}
		opts.NoVerify = true
	}
	local := func() error {
		c, err := s.store.openForWrite(m.Block.ContainerID)
		if err != nil {
			return err
		}
		o := opts
		if c.Parity() {
			o.Cache = false // read only to rebuild a lost member
		}
		if err := c.WriteChunk(m.Block.LocalID, m.Offset, data, m.Checksums, o); err != nil || commit == nil {
			return err
		}
		bcsID, err = c.PutBlock(m.Block.LocalID, m.Offset+int64(len(data)), container.PutOptions{Sync: commit.Sync, Final: commit.Final})
		return err
	}
	if len(m.Followers) == 0 {
		return bcsID, local()
	}
	fwd := *m
	fwd.Followers = nil
	err = s.replicate(ctx, m.Followers, local, func(ctx context.Context, c *wire.Conn) error {
		if err := c.Authorize(ctx, token); err != nil {
			return err
		}
		var ferr error
		if commit == nil {
			ferr = c.ForwardChunk(ctx, &fwd, data, check.sealed)
		} else {
			fc := *commit
			fc.Followers = nil
			_, ferr = c.ForwardCommit(ctx, &fc, data, check.sealed)
		}
		if ferr == nil && check.sealed != nil && c.PassRecords() {
			s.m.forwardedSealed.Add(int64(len(data)))
		}
		return ferr
	})
	return bcsID, err
}

// putBlock commits a block locally and on every follower in parallel
// (presenting token to them first, as writeChunk).
func (s *Server) putBlock(ctx context.Context, m *wire.PutBlockRequest, token []byte) (*wire.PutBlockResponse, error) {
	resp := &wire.PutBlockResponse{}
	local := func() error {
		c, err := s.store.openForWrite(m.Block.ContainerID)
		if err != nil {
			return err
		}
		resp.BCSID, err = c.PutBlock(m.Block.LocalID, m.Length, container.PutOptions{Sync: m.Sync, Final: m.Final})
		return err
	}
	var err error
	if len(m.Followers) == 0 {
		err = local()
	} else {
		fwd := *m
		fwd.Followers = nil
		err = s.replicate(ctx, m.Followers, local, func(ctx context.Context, c *wire.Conn) error {
			if err := c.Authorize(ctx, token); err != nil {
				return err
			}
			_, err := c.PutBlock(ctx, &fwd)
			return err
		})
	}
	if err != nil {
		return nil, err
	}
	return resp, nil
}

func (s *Server) getBlock(m *wire.GetBlockRequest) (*wire.GetBlockResponse, error) {
	c, err := s.store.Container(m.Block.ContainerID)
	if err != nil {
		return nil, err
	}
	b, err := c.GetBlock(m.Block.LocalID)
	if err != nil {
		return nil, err
	}
	resp := &wire.GetBlockResponse{Length: b.Length, BCSID: b.BCSID, Chunks: make([]wire.Chunk, len(b.Chunks))}
	size := 0
	for i, ch := range b.Chunks {
		resp.Chunks[i] = wire.Chunk{Offset: ch.Offset, Length: uint32(ch.Length), Checksums: ch.Checksums}
		size += 21 + len(ch.Checksums.Sums)
	}
	if size > wire.MaxResponsePayload {
		return nil, wire.Errorf(wire.CodeTooLarge, "block %v has %d chunks: %d bytes of chunk records exceed a response", m.Block, len(b.Chunks), size)
	}
	return resp, nil
}

func (s *Server) closeContainer(m *wire.CloseContainerRequest) (*wire.CloseContainerResponse, error) {
	c, err := s.store.Container(m.ContainerID)
	if err != nil {
		return nil, err
	}
	if err := c.Close(); err != nil {
		return nil, err
	}
	s.log.Info("datanode: container closed", "container", m.ContainerID)
	return &wire.CloseContainerResponse{BCSID: c.Info().BCSID}, nil
}
