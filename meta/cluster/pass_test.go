package cluster

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/strato-io/strato/proto/strato/v1"
)

// The replication pass in steps (ReplicationWork, passStep): the lock is
// released between steps, and whatever changes meanwhile, the plan stays
// sound. The traces run every script in steps of one container too
// (TestTraces); these change the state between the steps.

// queuedCopy is a copy a pass queued: container, pushed by source to
// target.
type queuedCopy struct {
	container      uint64
	source, target string
}

// takeCopies removes the copy commands queued for the datanodes and
// returns them (a heartbeat would also tell the manager the datanode
// lives).
func (e *env) takeCopies() []queuedCopy {
	e.m.mu.Lock()
	defer e.m.mu.Unlock()
	var out []queuedCopy
	for id, n := range e.m.s.nodes {
		for _, c := range n.takeCommands() {
			if rc := c.GetReplicateContainer(); rc != nil {
				out = append(out, queuedCopy{rc.ContainerId, id, rc.Target.GetId()})
			}
		}
	}
	return out
}

// kill lets DeadAfter pass, every datanode but those of dead
// heartbeating, and ticks: the others are DEAD.
func (e *env) kill(dead ...string) {
	e.now = e.now.Add(e.m.opts.DeadAfter)
	e.m.mu.Lock()
	var live []string
	for id := range e.m.s.nodes {
		if !slices.Contains(dead, id) {
			live = append(live, id)
		}
	}
	e.m.mu.Unlock()
	for _, id := range live {
		e.heartbeat(id, nil)
	}
	e.tick()
	for _, id := range dead {
		require.False(e.t, e.m.s.nodes[id].alive(), id)
	}
}

// TestPassStepsKeepLimits: copies land (and leave the copies in flight)
// between the steps of a pass, which still counts them: no datanode
// pushes or takes more than the limit in one pass, however its steps and
// the heartbeats interleave.
func TestPassStepsKeepLimits(t *testing.T) {
	e := closedClusterWith(t, Options{ReplicationStep: 1}, 8, 40)
	e.kill("dn1") // 15 containers under-replicated
	r := e.m.startPass(e.now, 1)
	pushes, imports := map[string]int{}, map[string]int{}
	steps, landed := 0, 0
	for e.m.passStep(r) {
		steps++
		for _, cp := range e.takeCopies() {
			pushes[cp.source]++
			imports[cp.target]++
			// Each copy lands at once: its target reports the replica.
			e.heartbeat(cp.target, &stratov1.ContainerReport{Replicas: []*stratov1.ContainerReplica{
				{ContainerId: cp.container, State: stratov1.ContainerState_CONTAINER_CLOSED}}})
			landed++
		}
	}
	require.GreaterOrEqual(t, steps, 40, "one container a step")
	require.Equal(t, r.rep.Scheduled, landed)
	require.Greater(t, landed, 1)
	for id, n := range pushes {
		require.LessOrEqual(t, n, 1, "pushes of %s", id)
	}
	for id, n := range imports {
		require.LessOrEqual(t, n, 1, "imports of %s", id)
	}
	require.Zero(t, r.rep.InFlight, "every copy landed")
	// The next pass has the limits free again, and goes on.
	rep := e.m.ReplicationWork(e.now, 1)
	require.Positive(t, rep.Scheduled)
	require.Equal(t, 15, r.rep.UnderReplicated)
}

// TestPassStepsDatanodeDies: a datanode dies between two steps: the steps
// after it neither copy from it nor to it, and the pass, during which a
// datanode changed, does not say whether a decommission is done (the
// containers judged before may need the dead one's copies); the next does.
func TestPassStepsDatanodeDies(t *testing.T) {
	e := closedClusterWith(t, Options{ReplicationStep: 1}, 8, 40)
	e.register("dn9") // holds nothing: decommissioned at the first pass that may say so
	require.NoError(t, e.decommission("dn9", false))
	e.kill("dn1")
	r := e.m.startPass(e.now, 10)
	require.True(t, e.m.passStep(r))
	require.True(t, e.m.passStep(r))
	before := e.takeCopies()
	require.NotEmpty(t, before)
	e.kill("dn1", "dn5")
	for e.m.passStep(r) {
	}
	after := e.takeCopies()
	require.NotEmpty(t, after)
	for _, cp := range after {
		require.NotEqual(t, "dn5", cp.source, "copy of c%d", cp.container)
		require.NotEqual(t, "dn5", cp.target, "copy of c%d", cp.container)
	}
	require.Empty(t, r.rep.Decommissioned)
	rep := e.m.ReplicationWork(e.now, 10)
	require.Equal(t, []string{"dn9"}, rep.Decommissioned)
}

// TestPassStepsContainerAdded: a container made between two steps, with a
// higher ID than every other, is still ahead of the pass, which copies it.
func TestPassStepsContainerAdded(t *testing.T) {
	e := closedClusterWith(t, Options{ReplicationStep: 1}, 4, 5)
	r := e.m.startPass(e.now, 10)
	require.True(t, e.m.passStep(r))
	res, err := e.propose(context.Background(), &stratov1.ClusterCommand{Op: &stratov1.ClusterCommand_AddContainer{AddContainer: &stratov1.ContainerRecord{Replication: three}}})
	require.NoError(t, err)
	id := res.(*stratov1.ContainerRecord).Id
	_, err = e.propose(context.Background(), setContainerState(e.now, id, stratov1.ContainerState_CONTAINER_CLOSED))
	require.NoError(t, err)
	e.heartbeat("dn1", &stratov1.ContainerReport{Replicas: []*stratov1.ContainerReplica{
		{ContainerId: id, State: stratov1.ContainerState_CONTAINER_CLOSED}}})
	for e.m.passStep(r) {
	}
	copies := e.takeCopies()
	require.Len(t, copies, 1)
	require.Equal(t, queuedCopy{id, "dn1", copies[0].target}, copies[0])
	require.Equal(t, 6, r.rep.Containers)
}

// TestPassStepsNewLeader: a leadership that starts between two steps ends
// the pass (its soft state is gone).
func TestPassStepsNewLeader(t *testing.T) {
	e := closedClusterWith(t, Options{ReplicationStep: 1}, 8, 40)
	e.kill("dn1")
	r := e.m.startPass(e.now, 10)
	require.True(t, e.m.passStep(r))
	e.m.BecomeLeader(e.now)
	require.False(t, e.m.passStep(r))
	require.Zero(t, r.rep.Scheduled)
	require.Empty(t, e.takeCopies())
}

// TestPassConcurrentHeartbeats runs passes while datanodes heartbeat and
// report (for the race detector: make testrace).
func TestPassConcurrentHeartbeats(t *testing.T) {
	e := closedClusterWith(t, Options{ReplicationStep: 3}, 8, 40)
	e.kill("dn1")
	var wg sync.WaitGroup
	for i := 2; i <= 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id := fmt.Sprintf("dn%d", i)
			for range 50 {
				_, err := e.m.Heartbeat(e.now, &stratov1.HeartbeatRequest{DatanodeId: id,
					Report: &stratov1.ContainerReport{Replicas: []*stratov1.ContainerReplica{
						{ContainerId: uint64(i), State: stratov1.ContainerState_CONTAINER_CLOSED}}}})
				if err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	for range 5 {
		e.m.ReplicationWork(e.now, 2)
	}
	wg.Wait()
}
