package cluster

import (
	"context"
	"fmt"
	"time"

	"github.com/strato-io/strato/proto/strato/v1"
)

// ImportContainer records a CLOSED container whose replicas were written
// straight into the given datanodes' directories (offline data generation):
// a pipeline of those members, closed at once so that no new block lands on
// it, the container on it, taken through CLOSING to CLOSED, and count block
// IDs reserved for its blocks. The replicas themselves are soft state, known
// once the datanodes report them.
func (m *Manager) ImportContainer(ctx context.Context, now time.Time, repl stratov1.ReplicationFactor, members []string, count uint64) (*stratov1.ContainerInfo, IDRange, error) {
	if len(members) != int(repl) {
		return nil, IDRange{}, fmt.Errorf("%w: %d members for replication %s", ErrInvalid, len(members), repl)
	}
	m.allocMu.Lock()
	defer m.allocMu.Unlock()
	p, err := m.addPipeline(ctx, now, Replicated(repl), members)
	if err != nil {
		return nil, IDRange{}, err
	}
	steps := []*stratov1.ClusterCommand{
		{NowUnixMs: now.UnixMilli(), Op: &stratov1.ClusterCommand_ClosePipeline{ClosePipeline: p.Id}},
		{NowUnixMs: now.UnixMilli(), Op: &stratov1.ClusterCommand_AddContainer{AddContainer: &stratov1.ContainerRecord{PipelineId: p.Id, Replication: repl}}},
	}
	var c *stratov1.ContainerInfo
	for _, cmd := range steps {
		res, err := m.propose(ctx, cmd)
		if err != nil {
			return nil, IDRange{}, err
		}
		if ci, ok := res.(*stratov1.ContainerRecord); ok {
			c = ContainerInfo(ci) // a copy: Apply keeps ci as its record
		}
	}
	for _, st := range []stratov1.ContainerState{stratov1.ContainerState_CONTAINER_CLOSING, stratov1.ContainerState_CONTAINER_CLOSED} {
		if _, err := m.propose(ctx, &stratov1.ClusterCommand{NowUnixMs: now.UnixMilli(), Op: &stratov1.ClusterCommand_SetContainerState{
			SetContainerState: &stratov1.ContainerStateChange{ContainerId: c.Id, State: st}}}); err != nil {
			return nil, IDRange{}, err
		}
	}
	res, err := m.propose(ctx, &stratov1.ClusterCommand{NowUnixMs: now.UnixMilli(), Op: &stratov1.ClusterCommand_ReserveLocalIds{ReserveLocalIds: count}})
	if err != nil {
		return nil, IDRange{}, err
	}
	r := res.(*stratov1.IDRange)
	c.State = stratov1.ContainerState_CONTAINER_CLOSED
	return c, IDRange{First: r.First, Count: r.Count}, nil
}

// IDRange is [First, First+Count).
type IDRange struct{ First, Count uint64 }
