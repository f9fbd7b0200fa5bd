package cluster

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"google.golang.org/protobuf/proto"

	"github.com/strato-io/strato/proto/strato/v1"
)

// Key layout of the durable cluster state. Every key starts with 'C'.
const (
	keyPrefix        = 'C'
	tagPipeline      = 'p' // C p <id:8> → PipelineInfo
	tagContainer     = 'c' // C c <id:8> → ContainerInfo
	tagNextContainer = 'n' // C n → next container ID (8 bytes)
	tagNextLocalID   = 'l' // C l → next unreserved block local ID (8 bytes)
	tagClusterID     = 'i' // C i → the cluster ID (string)
	tagNodeOp        = 'o' // C o <datanode ID> → NodeOpRecord (none: in service)
	tagBalancer      = 'b' // C b → BalancerRecord (none: never started)
)

func nodeOpKey(id string) []byte { return append([]byte{keyPrefix, tagNodeOp}, id...) }

func recordKey(tag byte, id uint64) []byte {
	k := make([]byte, 10)
	k[0], k[1] = keyPrefix, tag
	binary.BigEndian.PutUint64(k[2:], id)
	return k
}

func counterKey(tag byte) []byte { return []byte{keyPrefix, tag} }

func getCounter(r pebble.Reader, tag byte, initial uint64) (uint64, error) {
	v, closer, err := r.Get(counterKey(tag))
	if errors.Is(err, pebble.ErrNotFound) {
		return initial, nil
	}
	if err != nil {
		return 0, err
	}
	defer closer.Close()
	if len(v) != 8 {
		return 0, fmt.Errorf("%w: counter %q has %d bytes", ErrCorrupt, tag, len(v))
	}
	return binary.BigEndian.Uint64(v), nil
}

func setCounter(b *pebble.Batch, tag byte, v uint64) error {
	return b.Set(counterKey(tag), binary.BigEndian.AppendUint64(nil, v), nil)
}

// getString reads a string value ("" when the key is missing).
func getString(r pebble.Reader, key []byte) (string, error) {
	v, closer, err := r.Get(key)
	if errors.Is(err, pebble.ErrNotFound) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	defer func() { _ = closer.Close() }()
	return string(v), nil
}

func getRecord(r pebble.Reader, tag byte, id uint64, m proto.Message) error {
	v, closer, err := r.Get(recordKey(tag, id))
	if err != nil {
		return err
	}
	defer closer.Close()
	return proto.Unmarshal(v, m)
}

func putRecord(b *pebble.Batch, tag byte, id uint64, m proto.Message) error {
	return putProto(b, recordKey(tag, id), m)
}

func putProto(b *pebble.Batch, key []byte, m proto.Message) error {
	v, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
	if err != nil {
		return err
	}
	return b.Set(key, v, nil)
}

// Apply applies a prepared cluster command to b and mirrors the change into
// the manager's memory (under mu, briefly: a proposal waiting for its
// apply holds no lock Apply needs). It is deterministic: it reads only b. Results:
// add_container returns the ContainerInfo with its assigned ID,
// reserve_local_ids the IDRange reserved.
func (m *Manager) Apply(cmd *stratov1.ClusterCommand, b *pebble.Batch) (proto.Message, error) {
	switch op := cmd.Op.(type) {
	case *stratov1.ClusterCommand_AddPipeline:
		return m.applyAddPipeline(b, op.AddPipeline, cmd.NowUnixMs)
	case *stratov1.ClusterCommand_ClosePipeline:
		return m.applyClosePipeline(b, op.ClosePipeline)
	case *stratov1.ClusterCommand_AddContainer:
		return m.applyAddContainer(b, op.AddContainer, cmd.NowUnixMs)
	case *stratov1.ClusterCommand_SetContainerState:
		return m.applySetContainerState(b, op.SetContainerState)
	case *stratov1.ClusterCommand_ReserveLocalIds:
		return applyReserveLocalIDs(b, op.ReserveLocalIds)
	case *stratov1.ClusterCommand_SetClusterId:
		return m.applySetClusterID(b, op.SetClusterId)
	case *stratov1.ClusterCommand_SetNodeOpState:
		return m.applySetNodeOpState(b, op.SetNodeOpState, cmd.NowUnixMs)
	case *stratov1.ClusterCommand_Balancer:
		return m.applyBalancer(b, op.Balancer, cmd.NowUnixMs)
	}
	return nil, fmt.Errorf("cluster: unknown command %T", cmd.Op)
}

func (m *Manager) applyAddPipeline(b *pebble.Batch, add *stratov1.PipelineRecord, now int64) (proto.Message, error) {
	p := proto.Clone(add).(*stratov1.PipelineRecord)
	p.State = stratov1.PipelineState_PIPELINE_OPEN
	p.CreatedUnixMs = now
	if err := putRecord(b, tagPipeline, p.Id, p); err != nil {
		return nil, err
	}
	m.mu.Lock()
	m.s.putPipeline(p)
	m.mu.Unlock()
	return p, nil
}

func (m *Manager) applyClosePipeline(b *pebble.Batch, id uint64) (proto.Message, error) {
	var p stratov1.PipelineRecord
	if err := getRecord(b, tagPipeline, id, &p); err != nil {
		return nil, notFound(err, "pipeline %d", id)
	}
	p.State = stratov1.PipelineState_PIPELINE_CLOSED
	if err := putRecord(b, tagPipeline, p.Id, &p); err != nil {
		return nil, err
	}
	m.mu.Lock()
	m.s.putPipeline(&p)
	m.mu.Unlock()
	return &p, nil
}

// applyAddContainer records a new OPEN container under the next ID.
func (m *Manager) applyAddContainer(b *pebble.Batch, add *stratov1.ContainerRecord, now int64) (proto.Message, error) {
	id, err := getCounter(b, tagNextContainer, 1)
	if err != nil {
		return nil, err
	}
	if err := setCounter(b, tagNextContainer, id+1); err != nil {
		return nil, err
	}
	c := proto.Clone(add).(*stratov1.ContainerRecord)
	c.Id = id
	c.State = stratov1.ContainerState_CONTAINER_OPEN
	c.CreatedUnixMs = now
	c.AllocatedBytes = 0
	if err := putRecord(b, tagContainer, id, c); err != nil {
		return nil, err
	}
	m.mu.Lock()
	m.s.addContainer(&containerState{info: c})
	m.s.open[c.PipelineId] = append(m.s.open[c.PipelineId], id)
	m.mu.Unlock()
	return c, nil
}

func (m *Manager) applySetContainerState(b *pebble.Batch, ch *stratov1.ContainerStateChange) (proto.Message, error) {
	var c stratov1.ContainerRecord
	id := ch.ContainerId
	if err := getRecord(b, tagContainer, id, &c); err != nil {
		return nil, notFound(err, "container %d", id)
	}
	if !allowedTransition(c.State, ch.State) {
		return nil, fmt.Errorf("%w: container %d cannot go from %s to %s", ErrBadTransition, id, c.State, ch.State)
	}
	c.State = ch.State
	c.AllocatedBytes = 0
	if err := putRecord(b, tagContainer, id, &c); err != nil {
		return nil, err
	}
	m.mu.Lock()
	if cs := m.s.containers[id]; cs != nil {
		m.s.setContainerState(cs, c.State)
	} else {
		m.s.addContainer(&containerState{info: &c})
	}
	m.s.setState(&c)
	m.mu.Unlock()
	return &c, nil
}

// applyReserveLocalIDs reserves n block IDs and returns their IDRange.
func applyReserveLocalIDs(b *pebble.Batch, n uint64) (proto.Message, error) {
	first, err := getCounter(b, tagNextLocalID, 1)
	if err != nil {
		return nil, err
	}
	if n == 0 || first+n < first {
		return nil, fmt.Errorf("%w: cannot reserve %d block IDs from %d", ErrInvalid, n, first)
	}
	if err := setCounter(b, tagNextLocalID, first+n); err != nil {
		return nil, err
	}
	return &stratov1.IDRange{First: first, Count: n}, nil
}

// applySetClusterID keeps the first cluster ID ever set and returns it.
func (m *Manager) applySetClusterID(b *pebble.Batch, proposed string) (proto.Message, error) {
	if proposed == "" {
		return nil, fmt.Errorf("%w: empty cluster ID", ErrInvalid)
	}
	id, err := getString(b, counterKey(tagClusterID))
	if err != nil {
		return nil, err
	}
	if id == "" {
		id = proposed
		if err := b.Set(counterKey(tagClusterID), []byte(id), nil); err != nil {
			return nil, err
		}
	}
	m.mu.Lock()
	m.s.clusterID = id
	m.mu.Unlock()
	return &stratov1.RegisterResponse{ClusterId: id}, nil
}

// applySetNodeOpState records a datanode's operational state (in service:
// its record is deleted) and returns the NodeOpRecord.
func (m *Manager) applySetNodeOpState(b *pebble.Batch, ch *stratov1.NodeOpStateChange, now int64) (proto.Message, error) {
	id := ch.GetDatanodeId()
	if id == "" || ch.GetOpState() == stratov1.NodeOpState_NODE_OP_STATE_UNSPECIFIED {
		return nil, fmt.Errorf("%w: an operational state change names a datanode and a state", ErrInvalid)
	}
	rec, err := getNodeOp(b, id)
	if err != nil {
		return nil, err
	}
	if !allowedOpTransition(rec.OpState, ch.OpState) {
		return nil, fmt.Errorf("%w: datanode %s cannot go from %s to %s", ErrBadTransition, id, rec.OpState, ch.OpState)
	}
	// A maintenance keeps its end into IN_MAINTENANCE (the planner's
	// proposal names none); an operator's start sets it (zero: none).
	end := ch.MaintenanceEndUnixMs
	switch {
	case !maintenance(ch.OpState):
		end = 0
	case rec.OpState == stratov1.NodeOpState_NODE_ENTERING_MAINTENANCE && ch.OpState == stratov1.NodeOpState_NODE_IN_MAINTENANCE:
		end = rec.MaintenanceEndUnixMs
	}
	if rec.OpState != ch.OpState {
		rec = &stratov1.NodeOpRecord{OpState: ch.OpState, SinceUnixMs: now}
	}
	rec.MaintenanceEndUnixMs = end
	if rec.OpState == stratov1.NodeOpState_NODE_IN_SERVICE {
		err = b.Delete(nodeOpKey(id), nil)
	} else {
		err = putProto(b, nodeOpKey(id), rec)
	}
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	m.setOpStateLocked(id, rec.OpState, maintenanceEnd(rec))
	m.mu.Unlock()
	return rec, nil
}

// applyBalancer applies a change of the balancer's record
// (nextBalancerRecord) and returns the record as it is after it.
func (m *Manager) applyBalancer(b *pebble.Batch, ch *stratov1.BalancerChange, now int64) (proto.Message, error) {
	rec, err := getBalancer(b)
	if err != nil {
		return nil, err
	}
	next := nextBalancerRecord(rec, ch, now)
	if next == nil {
		return rec, nil
	}
	if err := putProto(b, counterKey(tagBalancer), next); err != nil {
		return nil, err
	}
	m.mu.Lock()
	m.s.bal.rec = next
	if ch.GetStart() != nil {
		// A new run starts with a new iteration and its own totals.
		m.s.bal.it, m.s.bal.doneMoves, m.s.bal.doneBytes = nil, 0, 0
	}
	m.mu.Unlock()
	return next, nil
}

// getBalancer reads the balancer's record (nil when it never started).
func getBalancer(r pebble.Reader) (*stratov1.BalancerRecord, error) {
	v, closer, err := r.Get(counterKey(tagBalancer))
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer func() { _ = closer.Close() }()
	rec := &stratov1.BalancerRecord{}
	if err := proto.Unmarshal(v, rec); err != nil {
		return nil, fmt.Errorf("%w: the balancer's record: %w", ErrCorrupt, err)
	}
	return rec, nil
}

// maintenanceEnd is the end of rec's maintenance (zero: none).
func maintenanceEnd(rec *stratov1.NodeOpRecord) time.Time {
	if rec.MaintenanceEndUnixMs == 0 {
		return time.Time{}
	}
	return time.UnixMilli(rec.MaintenanceEndUnixMs)
}

// getNodeOp reads a datanode's operational state record (IN_SERVICE when
// it has none).
func getNodeOp(r pebble.Reader, id string) (*stratov1.NodeOpRecord, error) {
	rec := &stratov1.NodeOpRecord{OpState: stratov1.NodeOpState_NODE_IN_SERVICE}
	v, closer, err := r.Get(nodeOpKey(id))
	if errors.Is(err, pebble.ErrNotFound) {
		return rec, nil
	}
	if err != nil {
		return nil, err
	}
	defer func() { _ = closer.Close() }()
	if err := proto.Unmarshal(v, rec); err != nil {
		return nil, fmt.Errorf("%w: datanode %s's operational state: %w", ErrCorrupt, id, err)
	}
	return rec, nil
}

// allowedOpTransition is a datanode's operational state machine: into
// decommissioning from service, out of it when every container has its
// copies elsewhere; into maintenance from service, in it when every
// container has its minimum elsewhere; and back into service from
// anywhere (recommission, the end of a maintenance). A decommission is
// not started during a maintenance nor a maintenance during a
// decommission. A planner's proposal made by a leader that had not seen
// the return to service applied first is refused.
func allowedOpTransition(from, to stratov1.NodeOpState) bool {
	switch {
	case from == to, to == stratov1.NodeOpState_NODE_IN_SERVICE:
		return true
	case to == stratov1.NodeOpState_NODE_DECOMMISSIONING, to == stratov1.NodeOpState_NODE_ENTERING_MAINTENANCE:
		return from == stratov1.NodeOpState_NODE_IN_SERVICE
	case to == stratov1.NodeOpState_NODE_DECOMMISSIONED:
		return from == stratov1.NodeOpState_NODE_DECOMMISSIONING
	case to == stratov1.NodeOpState_NODE_IN_MAINTENANCE:
		return from == stratov1.NodeOpState_NODE_ENTERING_MAINTENANCE
	}
	return false
}

// allowedTransition is the container state machine as meta records it.
func allowedTransition(from, to stratov1.ContainerState) bool {
	if from == to {
		return true
	}
	switch from {
	case stratov1.ContainerState_CONTAINER_OPEN:
		return to == stratov1.ContainerState_CONTAINER_CLOSING || to == stratov1.ContainerState_CONTAINER_CLOSED ||
			to == stratov1.ContainerState_CONTAINER_UNHEALTHY
	case stratov1.ContainerState_CONTAINER_CLOSING:
		return to == stratov1.ContainerState_CONTAINER_CLOSED || to == stratov1.ContainerState_CONTAINER_UNHEALTHY
	case stratov1.ContainerState_CONTAINER_CLOSED, stratov1.ContainerState_CONTAINER_UNHEALTHY:
		return to == stratov1.ContainerState_CONTAINER_DELETED
	}
	return false
}

func notFound(err error, format string, args ...any) error {
	if errors.Is(err, pebble.ErrNotFound) {
		return fmt.Errorf("%w: "+format, append([]any{ErrNotFound}, args...)...)
	}
	return err
}

// Load replaces the manager's durable mirror (pipelines, containers,
// datanodes' operational states) with
// what r holds. The server calls it at start and after installing a Raft
// snapshot. Soft state (nodes, replicas) is kept: the replicas of the
// containers r still holds, and the index of them by datanode
// (nodeState.containers); those of containers gone are dropped. The
// last replication pass's judgement is dropped with the containers it
// judged.
func (m *Manager) Load(r pebble.Reader) error {
	pipelines := map[uint64]*stratov1.PipelineRecord{}
	containers := map[uint64]*containerState{}
	it, err := r.NewIter(&pebble.IterOptions{LowerBound: []byte{keyPrefix}, UpperBound: []byte{keyPrefix + 1}})
	if err != nil {
		return err
	}
	defer func() { _ = it.Close() }()
	opStates := map[string]*stratov1.NodeOpRecord{}
	for it.First(); it.Valid(); it.Next() {
		k := it.Key()
		if len(k) > 2 && k[1] == tagNodeOp {
			rec := &stratov1.NodeOpRecord{}
			if err := proto.Unmarshal(it.Value(), rec); err != nil {
				return fmt.Errorf("%w: datanode %s's operational state: %w", ErrCorrupt, k[2:], err)
			}
			opStates[string(k[2:])] = rec
			continue
		}
		if len(k) != 10 {
			continue
		}
		id := binary.BigEndian.Uint64(k[2:])
		switch k[1] {
		case tagPipeline:
			p := &stratov1.PipelineRecord{}
			if err := proto.Unmarshal(it.Value(), p); err != nil {
				return fmt.Errorf("%w: pipeline %d: %w", ErrCorrupt, id, err)
			}
			pipelines[id] = p
		case tagContainer:
			c := &stratov1.ContainerRecord{}
			if err := proto.Unmarshal(it.Value(), c); err != nil {
				return fmt.Errorf("%w: container %d: %w", ErrCorrupt, id, err)
			}
			containers[id] = &containerState{info: c}
		}
	}
	if err := it.Error(); err != nil {
		return err
	}
	clusterID, err := getString(r, counterKey(tagClusterID))
	if err != nil {
		return err
	}
	bal, err := getBalancer(r)
	if err != nil {
		return err
	}
	open, closing := map[uint64][]uint64{}, map[uint64]bool{}
	byState := map[stratov1.ContainerState]int64{}
	for id, c := range containers {
		byState[c.info.State]++
		switch c.info.State {
		case stratov1.ContainerState_CONTAINER_OPEN:
			open[c.info.PipelineId] = append(open[c.info.PipelineId], id)
		case stratov1.ContainerState_CONTAINER_CLOSING:
			closing[id] = true
		}
	}
	for _, ids := range open {
		slices.Sort(ids)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.s.clusterID = clusterID
	m.s.bal.rec = bal
	for id := range m.s.opStates {
		m.setOpStateLocked(id, stratov1.NodeOpState_NODE_IN_SERVICE, time.Time{})
	}
	for id, rec := range opStates {
		m.setOpStateLocked(id, rec.OpState, maintenanceEnd(rec))
	}
	m.s.pipelines, m.s.pipesSorted = pipelines, nil
	m.s.keepReplicas(containers)
	m.s.containers, m.s.sorted, m.s.added = containers, nil, nil
	m.s.byState, m.s.judged = byState, nil
	m.s.closedReported = 0
	for _, c := range containers {
		if len(c.replicas) > 0 {
			m.s.countReported(c, 1)
		}
	}
	m.s.open, m.s.closing = open, closing
	m.s.pipelinesDirty = true
	m.s.usableGen++
	m.idNext, m.idEnd = 0, 0 // reserved ranges do not survive a reload
	return nil
}

// keepReplicas carries the replicas known of the containers into their
// records loaded anew, containers, and drops from the datanodes' index
// the containers no longer there.
func (s *state) keepReplicas(containers map[uint64]*containerState) {
	for id, c := range containers {
		if old := s.containers[id]; old != nil {
			c.replicas, c.bad = old.replicas, old.bad
		}
	}
	for _, n := range s.nodes {
		n.reported = reportDigest{} // its replicas of containers gone are dropped unsummed
		for cid := range n.containers {
			if containers[cid] == nil {
				delete(n.containers, cid)
			}
		}
	}
}
