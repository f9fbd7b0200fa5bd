package cluster

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/strato-io/strato/proto/strato/v1"
)

// Decommissioning. A datanode's operational state is durable (C o
// records, ClusterCommand.set_node_op_state): the leader proposes the
// change, every replica applies it (applySetNodeOpState), and a new leader
// carries on. While a datanode is DECOMMISSIONING its replicas do not count
// as good copies, so the replication pass copies them elsewhere and holds
// the datanode back while a container still needs it (holdDecommission);
// once none does, the pass reports it and the server proposes
// Decommissioned.

// Decommission starts (or, with recommission, undoes) taking a datanode out
// of service, through consensus: the state is durable, and a new leader
// carries on. A DECOMMISSIONING datanode still serves reads and is a
// source for copies, but its replicas no longer count; once every
// container it holds has enough copies elsewhere ReplicationWork reports
// it, and the server records it DECOMMISSIONED (Decommissioned). The
// datanode must be registered, or have a recorded state (one that left
// after its decommission may be recommissioned). It proposes with no lock
// held.
func (m *Manager) Decommission(ctx context.Context, now time.Time, id string, recommission bool) error {
	from, known := m.knownOpState(id)
	recorded := from != stratov1.NodeOpState_NODE_IN_SERVICE
	to, change, err := decommissionChange(id, known, recorded, from, recommission)
	if err != nil || !change {
		return err
	}
	_, err = m.propose(ctx, setNodeOpState(now, id, to))
	return err
}

// decommissionChange is Decommission's judgement: the state to propose
// for datanode id, recorded in state from if it is not in service, if
// any. A datanode out of service is not decommissioned again, one in
// service is not recommissioned, one in maintenance is not decommissioned
// (its maintenance is ended first).
func decommissionChange(id string, known, recorded bool, from stratov1.NodeOpState, recommission bool) (stratov1.NodeOpState, bool, error) {
	switch {
	case !known:
		return 0, false, fmt.Errorf("%w: datanode %q", ErrNotFound, id)
	case recommission:
		return stratov1.NodeOpState_NODE_IN_SERVICE, recorded, nil
	case maintenance(from):
		return 0, false, fmt.Errorf("%w: datanode %s is %s: end its maintenance before decommissioning it",
			ErrBadTransition, id, opName(from))
	}
	return stratov1.NodeOpState_NODE_DECOMMISSIONING, !recorded, nil
}

// Decommissioned is the command that records datanode id DECOMMISSIONED,
// for the server to propose when ReplicationWork reports it done.
func Decommissioned(now time.Time, id string) *stratov1.ClusterCommand {
	return setNodeOpState(now, id, stratov1.NodeOpState_NODE_DECOMMISSIONED)
}

// knownOpState is datanode id's recorded operational state, and whether
// the manager knows the datanode at all (registered, or recorded).
func (m *Manager) knownOpState(id string) (stratov1.NodeOpState, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, registered := m.s.nodes[id]
	st := m.s.opState(id)
	return st, registered || st != stratov1.NodeOpState_NODE_IN_SERVICE
}

// opName is an operational state as operators read it.
func opName(st stratov1.NodeOpState) string { return strings.TrimPrefix(st.String(), "NODE_") }

func setNodeOpState(now time.Time, id string, st stratov1.NodeOpState) *stratov1.ClusterCommand {
	return &stratov1.ClusterCommand{NowUnixMs: now.UnixMilli(), Op: &stratov1.ClusterCommand_SetNodeOpState{
		SetNodeOpState: &stratov1.NodeOpStateChange{DatanodeId: id, OpState: st}}}
}
