package cluster

import (
	"fmt"
	"math"

	"github.com/strato-io/strato/proto/strato/v1"
)

// DiskBalancer queues cmd for datanode id: its disk balancer starts (or
// stops) when the datanode's next heartbeat brings the command, and the
// datanode reports its progress in its NodeStats (disk_balancer). The
// command is soft state, as every queued command is: a datanode that
// misses it (meta failed over first) is asked again by the operator.
func (m *Manager) DiskBalancer(id string, cmd *stratov1.DiskBalancerCommand) error {
	if !cmd.GetStop() {
		if t := cmd.GetThreshold(); t < 0 || t >= 1 || math.IsNaN(t) {
			return fmt.Errorf("%w: disk balancer threshold %v is not a fraction in [0, 1)", ErrInvalid, t)
		}
		if cmd.GetBandwidth() < -1 {
			return fmt.Errorf("%w: disk balancer bandwidth %d (-1: no cap)", ErrInvalid, cmd.GetBandwidth())
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	n := m.s.nodes[id]
	switch {
	case id == "":
		return fmt.Errorf("%w: no datanode ID", ErrInvalid)
	case n == nil:
		return fmt.Errorf("%w: datanode %q", ErrNotFound, id)
	case !n.alive():
		return fmt.Errorf("%w: datanode %q is not alive", ErrBadTransition, id)
	}
	m.queueLocked(id, &stratov1.DatanodeCommand{Cmd: &stratov1.DatanodeCommand_DiskBalancer{DiskBalancer: cmd}})
	return nil
}
