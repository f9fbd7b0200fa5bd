package replication

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/strato-io/strato/datanode/container"
	"github.com/strato-io/strato/wire"
)

// Target is where Receive imports a container: a datanode's Store.
type Target interface {
	// BeginImport reserves the container's ID and returns where its files
	// go; container.ErrExists if the ID is held or being imported.
	BeginImport(id uint64, layout container.Layout) (Import, error)
}

// Import is one container being imported (container.Import, plus what
// the Store does on commit).
type Import interface {
	// Expect names the blocks before their data, so that WriteAt can
	// verify each file as it arrives in order.
	Expect(blocks []container.Block)
	// SetReplicaIndex makes the container hold replica index i of an
	// erasure coded container (IMPORT_INDEX; a rebuilt member).
	SetReplicaIndex(i int) error
	WriteAt(localID uint64, chunkOffset, fileOffset int64, p []byte) error
	// WriteChunk writes a chunk whose checksums the caller computed from
	// its bytes (a rebuilt replica): Commit does not read it back.
	WriteChunk(localID uint64, ch container.Chunk, p []byte) error
	Commit(blocks []container.Block, bcsID uint64) (container.Info, error)
	Abort() error
}

// ReceiveOptions configure Receive.
type ReceiveOptions struct {
	// Metrics count the bytes and imports. Default: none.
	Metrics *Metrics
	// Logger. Default: slog.Default().
	Logger *slog.Logger
	// Remote names the source in logs.
	Remote string
	// Foreground is when the target last served a client: an import whose
	// IMPORT_BEGIN is marked background gives way to them before each
	// frame it reads (the source's sends wait on the connection). Default:
	// nil, never.
	Foreground *Foreground
}

// ErrSession is wrapped by the errors of Receive after which the
// connection must be closed (the source is told the error first when
// possible).
var ErrSession = errors.New("replication: import session failed")

// Receive runs the import session that begin opened: the server has read
// begin's frame header h and typed header from r, and its payload (the
// block records) is next. Receive answers on w, reads IMPORT_DATA frames
// into the import's files, and on IMPORT_COMMIT verifies and registers the
// container; on IMPORT_ABORT it drops it. It returns nil when the session
// ended cleanly (the connection may carry other requests), or an error
// wrapping ErrSession after which the caller closes the connection: the
// import left nothing behind in either case unless it committed.
//
// codeOf turns the target's errors into wire codes for the answers.
func Receive(ctx context.Context, r *wire.Reader, w *wire.Writer, h wire.FrameHeader, begin *wire.ImportBeginRequest,
	target Target, codeOf func(error) wire.Code, opts ReceiveOptions) error {
	if opts.Metrics == nil {
		opts.Metrics = &Metrics{}
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	m := opts.Metrics
	m.importsInFlight.Add(1)
	defer m.importsInFlight.Add(-1)
	rc := &receiver{r: r, w: w, codeOf: codeOf, opts: &opts, id: begin.ContainerID}
	err := rc.run(ctx, h, begin, target)
	switch {
	case err == nil:
		m.importsCompleted.Add(1)
		return nil
	case errors.Is(err, errAborted):
		m.importsFailed.Add(1)
		return nil
	}
	m.importsFailed.Add(1)
	opts.Logger.Warn("datanode: container import failed; nothing kept", "container", begin.ContainerID, "remote", opts.Remote, "err", err)
	return fmt.Errorf("%w: %w", ErrSession, err)
}

var errAborted = errors.New("replication: import aborted by the source")

type receiver struct {
	r      *wire.Reader
	w      *wire.Writer
	codeOf func(error) wire.Code
	opts   *ReceiveOptions
	id     uint64
}

// fail answers request (t, id) with err and returns err.
func (rc *receiver) fail(ctx context.Context, t wire.Type, id uint64, err error) error {
	var e *wire.Error
	if !errors.As(err, &e) {
		code := rc.codeOf(err)
		if errors.Is(err, container.ErrExists) {
			code = wire.CodeContainerExists
		}
		e = &wire.Error{Code: code, Message: err.Error()}
	}
	_ = rc.w.WriteError(ctx, t, id, e)
	return err
}

func (rc *receiver) run(ctx context.Context, h wire.FrameHeader, begin *wire.ImportBeginRequest, target Target) (err error) {
	payload := make([]byte, h.PayloadLen)
	if err := rc.r.ReadPayload(payload); err != nil {
		return err
	}
	if err := begin.DecodePayload(payload); err != nil {
		return rc.fail(ctx, h.Type, h.RequestID, err)
	}
	blocks := make([]container.Block, len(begin.Blocks))
	files := map[fileKey]int64{} // file → its length
	layout := container.Layout(begin.Layout)
	for i, b := range begin.Blocks {
		cb := container.Block{LocalID: b.LocalID, Length: b.Length, BCSID: b.BCSID, Chunks: make([]container.Chunk, len(b.Chunks))}
		for j, ch := range b.Chunks {
			cb.Chunks[j] = container.Chunk{Offset: ch.Offset, Length: int64(ch.Length), Checksums: ch.Checksums}
			if layout == container.FilePerChunk {
				files[fileKey{b.LocalID, ch.Offset}] = int64(ch.Length)
			}
		}
		if layout == container.FilePerBlock && b.Length > 0 {
			files[fileKey{b.LocalID, 0}] = b.Length
		}
		blocks[i] = cb
	}
	im, err := target.BeginImport(begin.ContainerID, layout)
	if err != nil {
		return rc.fail(ctx, h.Type, h.RequestID, err)
	}
	im.Expect(blocks)
	committed := false
	defer func() {
		if !committed {
			if aerr := im.Abort(); aerr != nil {
				rc.opts.Logger.Warn("datanode: removing an aborted import", "container", rc.id, "err", aerr)
			}
		}
	}()
	if err := rc.w.WriteMessage(ctx, h.RequestID, &wire.ImportBeginResponse{}, nil); err != nil {
		return err
	}
	rc.opts.Logger.Info("datanode: importing container", "container", rc.id, "remote", rc.opts.Remote,
		"blocks", len(blocks), "bytes", begin.TotalBytes)

	var fg *Foreground
	if begin.Background {
		fg = rc.opts.Foreground
	}
	var buf []byte
	for {
		if err := fg.GiveWay(ctx); err != nil {
			return err
		}
		h, msg, err := rc.r.Next()
		if err != nil {
			if wire.CodeOf(err) != 0 {
				return rc.fail(ctx, h.Type, h.RequestID, err)
			}
			return err // the connection ended: nothing to answer
		}
		switch msg := msg.(type) {
		case *wire.ImportDataRequest:
			n := int64(h.PayloadLen)
			want, ok := files[fileKey{msg.LocalID, msg.ChunkOffset}]
			if !ok || msg.FileOffset > want-n {
				_ = rc.r.Discard()
				return rc.fail(ctx, h.Type, h.RequestID, wire.Errorf(wire.CodeInvalidArgument,
					"IMPORT_DATA: block %d, file at chunk %d: [%d, %d) is not part of container %d", msg.LocalID, msg.ChunkOffset, msg.FileOffset, msg.FileOffset+n, rc.id))
			}
			if int64(cap(buf)) < n {
				buf = make([]byte, n)
			}
			p := buf[:n]
			if err := rc.r.ReadPayload(p); err != nil {
				return err
			}
			rc.opts.Metrics.bytesIn.Add(n)
			if err := im.WriteAt(msg.LocalID, msg.ChunkOffset, msg.FileOffset, p); err != nil {
				return rc.fail(ctx, h.Type, h.RequestID, err)
			}
			if err := rc.w.WriteMessage(ctx, h.RequestID, &wire.ImportDataResponse{}, nil); err != nil {
				return err
			}
		case *wire.ImportIndexRequest:
			// A copy of an erasure coded container's replica keeps its
			// index (sent before the data).
			if msg.ContainerID != rc.id {
				return rc.fail(ctx, h.Type, h.RequestID, wire.Errorf(wire.CodeInvalidArgument, "IMPORT_INDEX of container %d during the import of %d", msg.ContainerID, rc.id))
			}
			if err := im.SetReplicaIndex(int(msg.ReplicaIndex)); err != nil {
				return rc.fail(ctx, h.Type, h.RequestID, err)
			}
			if err := rc.w.WriteMessage(ctx, h.RequestID, &wire.ImportIndexResponse{}, nil); err != nil {
				return err
			}
		case *wire.ImportCommitRequest:
			if msg.ContainerID != rc.id {
				return rc.fail(ctx, h.Type, h.RequestID, wire.Errorf(wire.CodeInvalidArgument, "IMPORT_COMMIT of container %d during the import of %d", msg.ContainerID, rc.id))
			}
			info, err := im.Commit(blocks, begin.BCSID)
			if err != nil {
				return rc.fail(ctx, h.Type, h.RequestID, err)
			}
			committed = true
			rc.opts.Logger.Info("datanode: container imported", "container", rc.id, "remote", rc.opts.Remote, "blocks", info.BlockCount, "bytes", info.UsedBytes)
			if err := rc.w.WriteMessage(ctx, h.RequestID, &wire.ImportCommitResponse{BCSID: info.BCSID, Bytes: info.UsedBytes}, nil); err != nil {
				return fmt.Errorf("container %d imported, but its commit could not be answered: %w", rc.id, err)
			}
			return nil
		case *wire.ImportAbortRequest:
			if err := im.Abort(); err != nil {
				return rc.fail(ctx, h.Type, h.RequestID, err)
			}
			if err := rc.w.WriteMessage(ctx, h.RequestID, &wire.ImportAbortResponse{}, nil); err != nil {
				return err
			}
			return errAborted
		default:
			_ = rc.r.Discard()
			return rc.fail(ctx, h.Type, h.RequestID, wire.Errorf(wire.CodeBadState, "%v during the import of container %d", h.Type, rc.id))
		}
	}
}

type fileKey struct {
	localID  uint64
	chunkOff int64
}
