package datanode

import "github.com/strato-io/strato/proto/stratopb"

// deleteContainer removes a replica meta no longer wants.
func (a *agent) deleteContainer(cmdID uint64, cmd *stratopb.DeleteContainerCommand) {
	if err := a.store.DeleteContainer(cmd.ContainerId, cmd.Force); err != nil {
		a.opts.Logger.Warn("datanode: delete container", "command", cmdID, "container", cmd.ContainerId, "err", err)
		return
	}
	a.containerChanged(cmd.ContainerId)
}

// deleteBlocks deletes blocks no key references any more.
func (a *agent) deleteBlocks(cmdID uint64, cmd *stratopb.DeleteBlocksCommand) {
	a.opts.Logger.Warn("datanode: block deletion is not available in this build", "command", cmdID, "container", cmd.ContainerId)
}
