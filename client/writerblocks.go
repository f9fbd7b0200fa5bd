package client

import (
	"context"
	"errors"
	"fmt"

	"github.com/strato-io/strato/proto/strato/v1"
	"github.com/strato-io/strato/wire"
)

// A Writer's blocks: allocating the next one (pre-allocated or from
// meta), and recovering from a failed pipeline by ending the block at its
// committed length and sending the rest again to a new block that avoids the
// failed datanodes.

// recover handles a failed write or commit of the current block: it ends
// the block at its committed length, and sends every uncommitted chunk again
// to a new block.
func (w *Writer) recover(cause error) error {
	for _, cs := range w.pending {
		if err := cs.wait(); err != nil && !errors.Is(err, cause) {
			w.c.opts.Logger.Debug("client: a pending chunk failed too", "key", w.key, "offset", cs.off, "err", err)
		}
	}
	redo := make([]*chunkSend, 0, len(w.pending))
	redo = append(redo, w.pending...)
	w.pending, w.nAcked = w.pending[:0], 0
	w.landed()
	if err := w.ctx.Err(); err != nil {
		return err
	}
	failed := failedNodes(w.cur, cause)
	if len(failed) > 0 {
		w.failures++
	} else {
		w.closures++ // the container closed under the writer: routine
	}
	if errors.Is(cause, ErrAccessDenied) {
		// The block's token expired, or a datanode restarted and has
		// not heard from meta yet: a new block brings a new token.
		// Anything more is not going to pass.
		if w.denials++; w.denials > maxDenials {
			return fmt.Errorf("client: writing %s/%s/%s: %w", w.volume, w.bucket, w.key, cause)
		}
	}
	if w.failures > maxRecoveries || w.closures > maxClosures {
		return fmt.Errorf("client: writing %s/%s/%s: giving up after %d datanode failures and %d closed containers: %w",
			w.volume, w.bucket, w.key, w.failures, w.closures, cause)
	}
	w.c.opts.Logger.Warn("client: pipeline failed, moving to a new block", "key", w.key,
		"block", wireBlock(w.cur.BlockId).String(), "committed", w.committed, "resending", len(redo), "err", cause)
	w.seal(failed)
	for _, cs := range redo {
		if err := w.send(cs.data, cs.sums); err != nil {
			return err
		}
	}
	return nil
}

// failedNodes names the datanodes of bl's pipeline that err blames
// (docs/wire.md, pipeline errors): followers listed with a code about the
// node itself (unreachable, disk error, disk full, corruption, or a code
// this client does not know), or the leader for its own such error or a
// broken connection. A replica refusing the request (its container closed)
// is nobody's fault.
func failedNodes(bl *stratov1.BlockLocation, err error) map[string]bool {
	members := bl.GetPipeline().GetMembers()
	failed := map[string]bool{}
	var we *wire.Error
	if !errors.As(err, &we) {
		if len(members) > 0 {
			failed[members[0].Id] = true // the connection to the leader broke
		}
		return failed
	}
	for _, f := range we.Failed {
		if !nodeFault(f.Code) {
			continue
		}
		for _, m := range members {
			if m.DataAddr == f.Addr {
				failed[m.Id] = true
			}
		}
	}
	if we.Code != wire.CodeFollowerFailed && nodeFault(we.Code) && len(members) > 0 {
		failed[members[0].Id] = true
	}
	return failed
}

// nodeFault: the code says something about the datanode, not the request.
func nodeFault(c wire.Code) bool {
	switch c {
	case wire.CodeUnavailable, wire.CodeIO, wire.CodeNoSpace, wire.CodeCorrupt, wire.CodeInternal:
		return true
	}
	return !c.Known()
}

// seal ends the current block at its committed length (dropped from the
// key if that is 0). The surviving replicas are asked to finalise and fsync
// it; that may fail harmlessly (a closed container already made it durable).
// Meta closes the container, and later blocks avoid it, its pipeline and the
// failed datanodes.
func (w *Writer) seal(failed map[string]bool) {
	old, length := w.cur, w.committed
	w.cur, w.curLen, w.committed = nil, 0, 0
	old.Length = length
	if length == 0 {
		w.blocks = w.blocks[:len(w.blocks)-1]
	} else {
		w.syncOnEach(old, length, failed)
	}
	w.avoid(old, failed)
}

// avoid makes later blocks avoid block bl's container, and, when failed
// names datanodes, those and bl's pipeline; meta is asked to close the
// container.
func (w *Writer) avoid(bl *stratov1.BlockLocation, failed map[string]bool) {
	var failedID string
	for id := range failed {
		failedID = id
		w.exclude.Datanodes = append(w.exclude.Datanodes, id)
	}
	cid := bl.GetBlockId().GetContainerId()
	w.exclude.Containers = append(w.exclude.Containers, cid)
	if len(failed) > 0 {
		// The pipeline is broken; a container that merely closed leaves
		// its pipeline usable.
		w.exclude.Pipelines = append(w.exclude.Pipelines, bl.GetPipeline().GetId())
	}
	err := retryMeta(w.ctx, func(ctx context.Context) error {
		return w.c.CloseContainer(ctx, cid, failedID, "client write failed")
	})
	if err != nil {
		w.c.opts.Logger.Warn("client: asking meta to close a container failed", "container", cid, "err", err)
	}
}

// nextBlock ends the current block and starts the next one.
func (w *Writer) nextBlock() error {
	if w.cur != nil {
		if err := w.commitBlock(true, false); err != nil {
			return err
		}
	}
	bl, err := w.allocate()
	if err != nil {
		return err
	}
	w.cur, w.curLen, w.committed = bl, 0, 0
	return nil
}

// allocate starts the key's next block (an erasure coded key's next block
// group): one that came with the open key, or one meta allocates.
func (w *Writer) allocate() (*stratov1.BlockLocation, error) {
	var bl *stratov1.BlockLocation
	if w.deferredWrite && len(w.blocks) == 0 && len(w.spare) > 0 && w.usable(w.spare[0]) {
		bl, w.spare = w.spare[0], w.spare[1:] // the deferred write's block
	} else if err := w.openNow(w.blockSize); err != nil {
		return nil, err
	}
	for len(w.spare) > 0 && bl == nil {
		if w.usable(w.spare[0]) {
			bl = w.spare[0]
		}
		w.spare = w.spare[1:]
	}
	if bl == nil {
		err := retryMeta(w.c.idempotent(w.ctx), func(ctx context.Context) error {
			resp, err := ns(ctx, w.c, func(ctx context.Context, n stratov1.NamespaceServiceClient) (*stratov1.AllocateBlockResponse, error) {
				return n.AllocateBlock(ctx, &stratov1.AllocateBlockRequest{Volume: w.volume, Bucket: w.bucket, Key: w.key,
					OpenId: w.openID, Exclude: &w.exclude, SizeHint: w.blockSize})
			})
			bl = resp.GetBlock()
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("client: writing %s/%s/%s: allocate a block: %w", w.volume, w.bucket, w.key, err)
		}
	}
	bl.Length = 0
	w.blocks = append(w.blocks, bl)
	return bl, nil
}

// usable: a pre-allocated block avoids everything excluded since.
func (w *Writer) usable(bl *stratov1.BlockLocation) bool {
	for _, c := range w.exclude.Containers {
		if bl.GetBlockId().GetContainerId() == c {
			return false
		}
	}
	for _, m := range bl.GetPipeline().GetMembers() {
		for _, d := range w.exclude.Datanodes {
			if m.Id == d {
				return false
			}
		}
	}
	return true
}
