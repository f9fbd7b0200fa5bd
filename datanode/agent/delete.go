package agent

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"sync"

	"github.com/strato-io/strato/datanode/container"
	"github.com/strato-io/strato/proto/strato/v1"
)

// deleteContainer removes a replica meta no longer wants.
func (a *Agent) deleteContainer(cmdID uint64, cmd *stratov1.DeleteContainerCommand) {
	if err := a.store.DeleteContainer(cmd.ContainerId, cmd.Force); err != nil {
		a.opts.Logger.Warn("datanode: delete container", "command", cmdID, "container", cmd.ContainerId, "err", err)
		return
	}
	a.ContainerChanged(cmd.ContainerId)
}

// deleteBlocks deletes blocks no key references any more and says whether
// it succeeded. Meta sends every command of one seq for this datanode in
// the same reply, so execute acknowledges a seq (in the next heartbeat)
// only if all of its commands of the reply succeeded; one that failed is
// not acknowledged, and meta sends it again after a while.
func (a *Agent) deleteBlocks(cmdID uint64, cmd *stratov1.DeleteBlocksCommand) bool {
	n, bytes, err := a.store.DeleteBlocks(cmd.ContainerId, cmd.LocalIds)
	if err != nil {
		lvl := slog.LevelWarn
		if errors.Is(err, container.ErrBusy) {
			lvl = slog.LevelDebug // a copy is reading the container; meta sends the command again
		}
		a.opts.Logger.Log(context.Background(), lvl, "datanode: delete blocks", "command", cmdID, "container", cmd.ContainerId,
			"blocks", len(cmd.LocalIds), "seq", cmd.Seq, "err", err)
		return false
	}
	if n > 0 {
		a.opts.Logger.Debug("datanode: deleted blocks", "container", cmd.ContainerId, "blocks", n, "bytes", bytes, "seq", cmd.Seq)
		a.ContainerChanged(cmd.ContainerId) // its used bytes go to meta with the next heartbeat
	}
	return true
}

// deleteAcks holds the deleted-blocks seqs carried out since the last
// heartbeat: true if every command of the seq succeeded.
type deleteAcks struct {
	mu   sync.Mutex
	seqs map[uint64]bool
}

func (d *deleteAcks) done(seq uint64, ok bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.seqs == nil {
		d.seqs = map[uint64]bool{}
	}
	if prev, seen := d.seqs[seq]; !seen || prev {
		d.seqs[seq] = ok
	}
}

// take returns the seqs to acknowledge, in order, and forgets them all.
func (d *deleteAcks) take() []uint64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	var out []uint64
	for seq, ok := range d.seqs {
		if ok {
			out = append(out, seq)
		}
	}
	clear(d.seqs)
	slices.Sort(out)
	return out
}

// requeue keeps acknowledgements a failed heartbeat did not deliver.
func (d *deleteAcks) requeue(seqs []uint64) {
	for _, seq := range seqs {
		d.done(seq, true)
	}
}
