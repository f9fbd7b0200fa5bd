package datanode

import "github.com/strato-io/strato/proto/stratopb"

// replicate pushes a closed container to another datanode (meta's
// ReplicateContainerCommand).
func (a *agent) replicate(cmdID uint64, cmd *stratopb.ReplicateContainerCommand) {
	a.opts.Logger.Warn("datanode: container replication is not available in this build", "command", cmdID, "container", cmd.ContainerId)
}
