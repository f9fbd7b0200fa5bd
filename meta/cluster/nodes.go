package cluster

import (
	"fmt"
	"slices"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/strato-io/strato/proto/strato/v1"
)

// Datanodes and their health: registration, heartbeats, container reports
// (which build the replica map), liveness. All soft state, rebuilt by
// every leader from what the datanodes send.

// Register records a datanode (again) with its full container report. It
// refuses a datanode that belongs to another cluster (ErrOtherCluster); the
// server sets the cluster's ID before the first registration.
func (m *Manager) Register(now time.Time, req *stratov1.RegisterRequest) error {
	d := req.GetDetails()
	if d.GetId() == "" || d.GetDataAddr() == "" {
		return fmt.Errorf("%w: a datanode registers with an ID and a data address", ErrInvalid)
	}
	report := req.GetReport()
	if report == nil {
		report = &stratov1.ContainerReport{}
	}
	report.Full = true
	digest := digestOf(report)
	m.mu.Lock()
	defer m.mu.Unlock()
	s := &m.s
	if req.GetClusterId() != "" && s.clusterID != "" && req.GetClusterId() != s.clusterID {
		return fmt.Errorf("%w: datanode %s belongs to cluster %s, this is cluster %s (a volume of another cluster, or a meta address reused)",
			ErrOtherCluster, d.Id, req.GetClusterId(), s.clusterID)
	}
	n := s.nodes[d.Id]
	if n == nil {
		n = &nodeState{containers: map[uint64]uint64{}, opState: s.opState(d.Id)}
		s.nodes[d.Id] = n
		s.nodeIDs = nil
	}
	n.details = proto.Clone(d).(*stratov1.DatanodeDetails)
	s.pipelinesDirty = true
	s.nodeChanged()
	n.stats.Store(req.GetStats())
	m.seenLocked(now, n)
	n.lastFull = now
	m.applyReportLocked(d.Id, n, report, digest)
	m.updateSafeModeLocked(now, false)
	m.hbNodes.Store(d.Id, n)
	return nil
}

// Heartbeat records a datanode's liveness, stats and (optional) report, and
// returns the commands queued for it. An unknown datanode gets
// ErrUnknownNode: it must register again.
//
// Most heartbeats are quiet (quiet): those of a HEALTHY datanode are
// served without mu (quietHeartbeat). The others, and a quiet one from
// a datanode that is not HEALTHY, unknown, or forgotten by a new
// leadership, take mu.
func (m *Manager) Heartbeat(now time.Time, req *stratov1.HeartbeatRequest) (*stratov1.HeartbeatResponse, error) {
	if quiet(req) {
		if resp, ok := m.quietHeartbeat(now, req); ok {
			return resp, nil
		}
	}
	digest := digestOf(req.Report)
	m.mu.Lock()
	defer m.mu.Unlock()
	n := m.s.nodes[req.GetDatanodeId()]
	if n == nil {
		return &stratov1.HeartbeatResponse{Reregister: true}, fmt.Errorf("%w: %q", ErrUnknownNode, req.GetDatanodeId())
	}
	m.seenLocked(now, n)
	if req.Stats != nil {
		n.stats.Store(req.Stats)
	}
	if req.Report != nil {
		if req.Report.Full {
			n.lastFull = now
		}
		m.applyReportLocked(req.DatanodeId, n, req.Report, digest)
		m.updateSafeModeLocked(now, false)
	}
	m.ackDeletedBlocksLocked(req.DatanodeId, req.DeletedBlocksAcks)
	m.commandsFailedLocked(now, req.DatanodeId, req.FailedCommands)
	return &stratov1.HeartbeatResponse{Commands: n.takeCommands()}, nil
}

// quiet: a heartbeat that changes nothing mu guards, only its datanode's
// time and stats: no container report, block deletion acknowledgement or
// command failure. (Reports come every few heartbeats; most are quiet.)
func quiet(req *stratov1.HeartbeatRequest) bool {
	return req.Report == nil && len(req.DeletedBlocksAcks) == 0 && len(req.FailedCommands) == 0
}

// quietHeartbeat serves a quiet heartbeat without mu: the datanode is
// found in hbNodes, its time and stats stored, and its commands handed
// out, under its hb. It declines (false) when the datanode is unknown,
// forgotten by BecomeLeader, or not HEALTHY: reviving a STALE or DEAD
// datanode changes what the planners read (its health, the usable
// pipelines), which only the holder of mu may do.
func (m *Manager) quietHeartbeat(now time.Time, req *stratov1.HeartbeatRequest) (*stratov1.HeartbeatResponse, bool) {
	v, ok := m.hbNodes.Load(req.GetDatanodeId())
	if !ok {
		return nil, false
	}
	n := v.(*nodeState)
	n.hb.Lock()
	defer n.hb.Unlock()
	if n.dropped || n.health != stratov1.NodeHealth_NODE_HEALTHY {
		return nil, false
	}
	n.seen.Store(now.UnixNano())
	if req.Stats != nil {
		n.stats.Store(req.Stats)
	}
	return &stratov1.HeartbeatResponse{Commands: n.takeCommandsLocked()}, true
}

// seenLocked records that datanode n was heard from at now, and holds it
// HEALTHY (again): a STALE or DEAD datanode that heartbeats is back.
func (m *Manager) seenLocked(now time.Time, n *nodeState) {
	n.hb.Lock()
	n.seen.Store(now.UnixNano())
	back := n.health != stratov1.NodeHealth_NODE_HEALTHY
	n.health = stratov1.NodeHealth_NODE_HEALTHY
	n.hb.Unlock()
	if back {
		m.s.pipelinesDirty = true
		m.s.nodeChanged()
	}
}

// applyReportLocked folds a container report into the replica map. A full
// report updates what it lists in place and then sweeps what it no longer
// lists, so that a report that changes nothing allocates nothing; and a
// full report whose digest d (digestOf, taken before mu) is that of what
// the datanode has reported and the map holds (nodeState.reported)
// changes nothing at all, and is not read (decision 0101).
func (m *Manager) applyReportLocked(id string, n *nodeState, r *stratov1.ContainerReport, d reportDigest) {
	if r.Full {
		m.fullReports.Add(1)
	}
	if d.ok && d == n.reported {
		m.repeatedReports.Add(1)
		return
	}
	s := &m.s
	n.reportGen++
	gen := n.reportGen
	for _, cid := range r.Deleted {
		delete(n.containers, cid)
		m.dropReplicaLocked(cid, id)
	}
	node := n.details.GetId() // shared by its replicas
	var known reportDigest    // a full report's known replicas
	indexMissing := false
	for _, rep := range r.Replicas {
		c := s.containers[rep.ContainerId]
		if c == nil {
			// Unknown to meta: the replication manager decides (issue of
			// orphan replicas). Its hash is in the report's digest, not
			// in the datanode's: the report is read again.
			continue
		}
		kept := replicaOf(node, rep)
		if c.bad[id] {
			kept.State = stratov1.ContainerState_CONTAINER_UNHEALTHY
		}
		old := c.replicas.get(id)
		if kept.State == stratov1.ContainerState_CONTAINER_UNHEALTHY {
			if old == nil || old.State != stratov1.ContainerState_CONTAINER_UNHEALTHY {
				s.lossGen++
			}
		}
		if old != nil {
			n.reported.drop(old.hash)
		}
		n.reported.add(kept.hash)
		known.add(kept.hash)
		if len(c.replicas) == 0 {
			s.countReported(c, 1)
		}
		c.replicas.put(kept)
		if m.placeMissingIndexLocked(c, id, &kept) {
			indexMissing = true // its command is queued again with each report
		}
		n.containers[rep.ContainerId] = gen
		k := copyKey{rep.ContainerId, rep.ReplicaIndex}
		if fl, ok := s.replicating[k]; ok && fl.target == id {
			delete(s.replicating, k)
		}
	}
	if indexMissing {
		n.reported.ok = false
	}
	if !r.Full {
		return
	}
	for cid, g := range n.containers {
		if g != gen {
			delete(n.containers, cid)
			m.dropReplicaLocked(cid, id)
		}
	}
	// The datanode's replicas are now exactly the known ones listed.
	known.ok = !indexMissing
	n.reported = known
}

// dropReplicaLocked forgets datanode id's replica of container cid: it is
// gone from the datanode (and with it any bad mark and deletion under way).
func (m *Manager) dropReplicaLocked(cid uint64, id string) {
	if c := m.s.containers[cid]; c != nil {
		if r := c.replicas.get(id); r != nil {
			if n := m.s.nodes[id]; n != nil {
				n.reported.drop(r.hash)
			}
			c.replicas.del(id)
			m.s.lossGen++
			if len(c.replicas) == 0 {
				m.s.countReported(c, -1)
			}
		}
		delete(c.bad, id)
	}
	delete(m.s.deleting, deleteKey{cid, id})
	m.moveDoneLocked(cid, id)
}

// commandsFailedLocked forgets the copies a source reports failed (and
// the reconstructions a target reports failed), so that the next
// ReplicationWork plans them again (away from the failed target while
// another exists) instead of waiting ReplicationTimeout. (Meta's heartbeat
// handler logs every failure with its reason.)
func (m *Manager) commandsFailedLocked(now time.Time, node string, failed []*stratov1.CommandFailure) {
	for _, f := range failed {
		for k, fl := range m.s.replicating {
			if k.container != f.ContainerId || fl.commanded() != node || fl.cmdID != f.CommandId {
				continue
			}
			delete(m.s.replicating, k)
			if c := m.s.containers[f.ContainerId]; c != nil {
				c.copyFailed, c.copyFailedUntil = fl.target, now.Add(m.opts.ReplicationTimeout)
			}
		}
	}
}

// healthAt is a datanode's health at now, judged by its last heartbeat.
func healthAt(o *Options, lastSeen, now time.Time) stratov1.NodeHealth {
	switch age := now.Sub(lastSeen); {
	case age >= o.DeadAfter:
		return stratov1.NodeHealth_NODE_DEAD
	case age >= o.StaleAfter:
		return stratov1.NodeHealth_NODE_STALE
	}
	return stratov1.NodeHealth_NODE_HEALTHY
}

// updateHealthLocked sets every datanode's health as of now. A change
// is made under the datanode's hb, its last heartbeat read again there:
// a quiet heartbeat either lands before (and the datanode stays HEALTHY)
// or finds the new health (and takes mu to revive it).
func (m *Manager) updateHealthLocked(now time.Time) {
	for _, n := range m.s.nodes {
		if healthAt(&m.opts, n.lastSeen(), now) == n.health {
			continue // quiet heartbeats only make a HEALTHY node more so
		}
		n.hb.Lock()
		h := healthAt(&m.opts, n.lastSeen(), now)
		changed := h != n.health
		n.health = h
		n.hb.Unlock()
		if changed {
			m.s.nodeChanged()
		}
	}
}

// setOpStateLocked mirrors a recorded operational state into memory,
// with the end of a maintenance (zero: none).
func (m *Manager) setOpStateLocked(id string, st stratov1.NodeOpState, end time.Time) {
	s := &m.s
	if st == stratov1.NodeOpState_NODE_IN_SERVICE {
		delete(s.opStates, id)
	} else {
		s.opStates[id] = st
	}
	if end.IsZero() || !maintenance(st) {
		delete(s.maintenanceEnd, id)
	} else {
		s.maintenanceEnd[id] = end
	}
	if n := s.nodes[id]; n != nil && n.opState != st {
		n.opState = st
		s.pipelinesDirty = true
		s.nodeChanged()
	}
}

// Datanodes lists up to limit registered datanodes with IDs above
// startAfter, by ID (limit 0: all of them).
func (m *Manager) Datanodes(startAfter string, limit int) []*stratov1.DatanodeInfo {
	m.mu.Lock()
	defer m.mu.Unlock()
	ids := m.s.sortedNodeIDs()
	i, found := slices.BinarySearch(ids, startAfter)
	if found {
		i++
	}
	page := ids[i:]
	if limit > 0 && len(page) > limit {
		page = page[:limit]
	}
	return m.s.datanodeInfos(page)
}

// Datanode is one registered datanode's listing, or false.
func (m *Manager) Datanode(id string) (*stratov1.DatanodeInfo, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.s.nodes[id] == nil {
		return nil, false
	}
	return m.s.datanodeInfos([]string{id})[0], true
}

// datanodeInfos lists the registered datanodes ids, with the open
// pipelines each is a member of (one pass over the pipelines).
func (s *state) datanodeInfos(ids []string) []*stratov1.DatanodeInfo {
	pipes := make(map[string]int32, len(ids))
	for _, id := range ids {
		pipes[id] = 0
	}
	for _, p := range s.pipelines {
		if p.State != stratov1.PipelineState_PIPELINE_OPEN {
			continue
		}
		for _, id := range p.Members {
			if _, ok := pipes[id]; ok {
				pipes[id]++
			}
		}
	}
	out := make([]*stratov1.DatanodeInfo, 0, len(ids))
	for _, id := range ids {
		n := s.nodes[id]
		out = append(out, &stratov1.DatanodeInfo{
			Details: n.details, Stats: n.stats.Load(), Health: n.health, OpState: n.opState,
			LastHeartbeatUnixMs: n.lastSeen().UnixMilli(), Containers: int32(len(n.containers)), Pipelines: pipes[id],
		})
	}
	return out
}

// HealthCounts counts the registered datanodes by health.
func (m *Manager) HealthCounts() map[stratov1.NodeHealth]int {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := map[stratov1.NodeHealth]int{}
	for _, n := range m.s.nodes {
		out[n.health]++
	}
	return out
}

// Node returns one datanode's details, or false.
func (m *Manager) Node(id string) (*stratov1.DatanodeDetails, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if n := m.s.nodes[id]; n != nil {
		return n.details, true
	}
	return nil, false
}

// Space is the cluster's raw space for GetFsStatus (Hadoop's getStatus):
// the sums of the last storage reports of the datanodes that are not DEAD,
// whose disks no longer count, and how many there are. Unlike Summary it
// needs no administrator: it says nothing of datanodes or containers.
func (m *Manager) Space() *stratov1.FsStatus {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := &stratov1.FsStatus{}
	for _, n := range m.s.nodes {
		if !n.alive() {
			continue
		}
		s.Datanodes++
		st := n.stats.Load()
		s.Capacity += st.GetCapacity()
		s.Used += st.GetUsed()
		s.Remaining += st.GetRemaining()
	}
	return s
}

// ---- Safe mode ---------------------------------------------------------------

func (s *state) safeModeStatus(o *Options) *stratov1.SafeModeStatus {
	healthy := 0
	for _, n := range s.nodes {
		if n.healthy() {
			healthy++
		}
	}
	// Only CLOSED containers are waited for (as in Ozone's container
	// safe-mode rule): a datanode makes a container at its first write, so
	// an open container allocated and never written is on no datanode, and
	// one closed before its first write (its pipeline failed) never
	// reaches CLOSED. Neither would ever be reported.
	total, reported := s.byState[stratov1.ContainerState_CONTAINER_CLOSED], s.closedReported
	frac := 1.0
	if total > 0 {
		frac = float64(reported) / float64(total)
	}
	return &stratov1.SafeModeStatus{
		InSafeMode:        s.safeMode,
		HealthyDatanodes:  int32(healthy),
		RequiredDatanodes: int32(o.SafeModeMinDatanodes),
		ReplicaFraction:   frac,
		RequiredFraction:  o.SafeModeReplicaFraction,
	}
}

// Judging safe mode reads every datanode (their health; the containers
// are counted as they change, state.closedReported): with more than
// safeModeBigState containers, the reports of many datanodes registering
// at once (a meta restart) judge it at most every safeModeCheckEvery, and
// every tick (force), rather than once per report.
func (m *Manager) updateSafeModeLocked(now time.Time, force bool) {
	if !m.s.safeMode {
		return
	}
	if !force && len(m.s.containers) > safeModeBigState && now.Sub(m.s.safeCheckedAt) < safeModeCheckEvery {
		return
	}
	m.s.safeCheckedAt = now
	st := m.s.safeModeStatus(&m.opts)
	if int(st.HealthyDatanodes) >= m.opts.SafeModeMinDatanodes && st.ReplicaFraction >= st.RequiredFraction {
		m.s.safeMode = false
	}
}

const (
	safeModeBigState   = 10_000
	safeModeCheckEvery = 250 * time.Millisecond
)

// SafeMode reports the safe-mode state and the figures it depends on.
func (m *Manager) SafeMode() *stratov1.SafeModeStatus {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.s.safeModeStatus(&m.opts)
}

// InSafeMode reports whether meta is in safe mode, without the figures
// (SafeMode counts every container).
func (m *Manager) InSafeMode() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.s.safeMode
}

// ExitSafeMode leaves safe mode now, whatever has reported (an admin's call).
func (m *Manager) ExitSafeMode() *stratov1.SafeModeStatus {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.s.safeMode = false
	m.s.safeForced = true
	return m.s.safeModeStatus(&m.opts)
}
