package cluster

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/strato-io/strato/proto/strato/v1"
)

// Maintenance (Ozone's and HDFS's): a datanode is patched or rebooted
// without being decommissioned (everything copied off it) and without
// meta re-replicating everything it holds once it is DEAD. Entering
// maintenance takes it out of service (its pipelines close) and copies
// only the replicated containers with fewer than
// Options.MaintenanceMinReplicas good copies elsewhere, up to that
// minimum; then the replication pass reports it (ReplicationReport.
// InMaintenance) and the server proposes IN_MAINTENANCE. While it is in
// maintenance, entering or in, its replicas are not good copies but lower
// what its containers need: a container is re-replicated only when its
// good copies elsewhere fall below the minimum (another datanode failed).
// Maintenance ends by EndMaintenance, by a recommission, or at its end
// time (planMaintenanceEnd, each tick); the copies made meanwhile are then
// extra and trimmed as any. Erasure coded containers get nothing special:
// an index held by a datanode in maintenance has no good replica, so it
// is rebuilt elsewhere as for any datanode out of service, and entering
// maintenance waits for that.

// StartMaintenance puts datanode id in maintenance until end (zero: until
// it is ended), through consensus. A datanode in maintenance already has
// its end replaced; one decommissioning or decommissioned is refused
// (ErrBadTransition), and one neither registered nor recorded is not
// found. It proposes with no lock held.
func (m *Manager) StartMaintenance(ctx context.Context, now time.Time, id string, end time.Time) error {
	from, known := m.knownOpState(id)
	switch {
	case !known:
		return fmt.Errorf("%w: datanode %q", ErrNotFound, id)
	case from == stratov1.NodeOpState_NODE_IN_SERVICE:
		from = stratov1.NodeOpState_NODE_ENTERING_MAINTENANCE
	case !maintenance(from):
		return fmt.Errorf("%w: datanode %s is %s: recommission it before its maintenance", ErrBadTransition, id, opName(from))
	}
	if !end.IsZero() && !end.After(now) {
		return fmt.Errorf("%w: maintenance end %s is not after now (%s)", ErrInvalid, end.UTC().Format(time.RFC3339), now.UTC().Format(time.RFC3339))
	}
	cmd := setNodeOpState(now, id, from)
	if !end.IsZero() {
		cmd.GetSetNodeOpState().MaintenanceEndUnixMs = end.UnixMilli()
	}
	_, err := m.propose(ctx, cmd)
	return err
}

// EndMaintenance puts datanode id, in maintenance, back in service,
// through consensus; a datanode not in maintenance is refused
// (ErrBadTransition: a decommission is undone by recommissioning). A
// recommission ends a maintenance too.
func (m *Manager) EndMaintenance(ctx context.Context, now time.Time, id string) error {
	from, known := m.knownOpState(id)
	switch {
	case !known:
		return fmt.Errorf("%w: datanode %q", ErrNotFound, id)
	case !maintenance(from):
		return fmt.Errorf("%w: datanode %s is %s, not in maintenance", ErrBadTransition, id, opName(from))
	}
	_, err := m.propose(ctx, setNodeOpState(now, id, stratov1.NodeOpState_NODE_IN_SERVICE))
	return err
}

// InMaintenance is the command that records datanode id IN_MAINTENANCE,
// for the server to propose when ReplicationWork reports it ready.
func InMaintenance(now time.Time, id string) *stratov1.ClusterCommand {
	return setNodeOpState(now, id, stratov1.NodeOpState_NODE_IN_MAINTENANCE)
}

// planMaintenanceEnd proposes IN_SERVICE for every datanode whose
// maintenance ended by now, registered or not (until the change applies,
// every tick proposes it again: it changes nothing twice).
func planMaintenanceEnd(s *state, now time.Time, p *plan) {
	for _, id := range slices.Sorted(maps.Keys(s.maintenanceEnd)) {
		if !now.Before(s.maintenanceEnd[id]) {
			p.propose = append(p.propose, setNodeOpState(now, id, stratov1.NodeOpState_NODE_IN_SERVICE))
		}
	}
}

// maintenanceNeed is how many good copies replicated container c needs
// while holders of it are in maintenance: its replication factor less
// those holders, but never below the minimum (capped by the factor). A
// holder in maintenance counts whatever its health: its absence is
// planned, and its replica comes back with it.
func (s *state) maintenanceNeed(c *containerState, reps replicaSet) int {
	factor, away := int(c.info.Replication), 0
	for id, rp := range reps.all() {
		if s.nodes[id].inMaintenance() && rp.State == stratov1.ContainerState_CONTAINER_CLOSED {
			away++
		}
	}
	return max(factor-away, min(factor, s.maintenanceMin))
}
