package cluster

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/strato-io/strato/proto/strato/v1"
)

// deleteCmds renders the DeleteBlocksCommands of a heartbeat reply.
func deleteCmds(resp *stratov1.HeartbeatResponse) []string {
	var out []string
	for _, c := range resp.Commands {
		if d := c.GetDeleteBlocks(); d != nil {
			out = append(out, fmt.Sprintf("seq %d: c%d %v", d.Seq, d.ContainerId, d.LocalIds))
		}
	}
	return out
}

func report(cids ...uint64) *stratov1.ContainerReport {
	r := &stratov1.ContainerReport{Full: true}
	for _, cid := range cids {
		r.Replicas = append(r.Replicas, &stratov1.ContainerReplica{ContainerId: cid, State: stratov1.ContainerState_CONTAINER_OPEN})
	}
	return r
}

func entry(seq uint64, blocks ...[2]uint64) *stratov1.DeletedBlocks {
	e := &stratov1.DeletedBlocks{Seq: seq}
	for _, b := range blocks {
		e.Blocks = append(e.Blocks, &stratov1.BlockIDRecord{ContainerId: b[0], LocalId: b[1]})
	}
	return e
}

// TestDeleteBlocks walks deleted-blocks entries through the leader's
// decisions: commands to every replica holder, nothing sent twice while in
// flight, a resend after the timeout to those that did not acknowledge,
// done only when every holder acknowledged, containers that no longer
// exist done at once, containers with no reported replica and DEAD holders
// waiting.
func TestDeleteBlocks(t *testing.T) {
	e := newEnv(t, Options{StaleAfter: 10 * time.Second, DeadAfter: 30 * time.Second, DeleteBlocksTimeout: 20 * time.Second})
	e.register("dn1", "dn2", "dn3", "dn4")
	a := e.alloc(three, Exclude{})
	b := e.alloc(three, Exclude{Pipelines: []uint64{a.Pipeline.Id}})
	require.NotEqual(t, a.ContainerID, b.ContainerID)
	ca, cb := a.ContainerID, b.ContainerID
	holders := map[string][]uint64{}
	for _, m := range a.Members {
		holders[m.Id] = append(holders[m.Id], ca)
	}
	for _, m := range b.Members {
		holders[m.Id] = append(holders[m.Id], cb)
	}
	// Only container a's holders report; b has no replica known yet.
	for _, m := range a.Members {
		e.heartbeat(m.Id, report(ca))
	}

	entries := []*stratov1.DeletedBlocks{
		entry(5, [2]uint64{ca, 1}, [2]uint64{ca, 2}),
		entry(6, [2]uint64{999, 1}), // container unknown: nothing to delete
		entry(7, [2]uint64{ca, 3}, [2]uint64{cb, 4}),
	}
	plan := e.m.DeleteBlocks(e.now, entries)
	require.Equal(t, []uint64{6}, plan.Purge)
	require.Equal(t, 2, plan.Waiting)
	require.Equal(t, 3, plan.Commands, "seq 5 to a's three holders; seq 7 waits for b's replicas")
	require.Equal(t, 6, plan.Blocks)
	for _, m := range a.Members {
		require.Equal(t, []string{fmt.Sprintf("seq 5: c%d [1 2]", ca)}, deleteCmds(e.heartbeat(m.Id, nil)))
	}

	// In flight: nothing is sent again before the timeout.
	e.now = e.now.Add(5 * time.Second)
	plan = e.m.DeleteBlocks(e.now, entries[:1])
	require.Zero(t, plan.Commands)

	// b's holders report: seq 7 goes to every holder of a or b, each with
	// the containers it holds, in one reply.
	for _, m := range b.Members {
		e.heartbeat(m.Id, report(holders[m.Id]...))
	}
	plan = e.m.DeleteBlocks(e.now, entries[2:])
	require.Equal(t, 6, plan.Commands, "one per replica of a and of b")
	for id, cids := range holders {
		var want []string
		for _, cid := range cids {
			if cid == ca {
				want = append(want, fmt.Sprintf("seq 7: c%d [3]", ca))
			} else {
				want = append(want, fmt.Sprintf("seq 7: c%d [4]", cb))
			}
		}
		require.ElementsMatch(t, want, deleteCmds(e.heartbeat(id, nil)), id)
	}

	// Two of a's holders acknowledge seq 5: not done.
	ack := func(id string, seqs ...uint64) {
		_, err := e.m.Heartbeat(e.now, &stratov1.HeartbeatRequest{DatanodeId: id, DeletedBlocksAcks: seqs})
		require.NoError(t, err)
	}
	ack(a.Members[0].Id, 5)
	ack(a.Members[1].Id, 5, 12345) // an unknown seq is ignored
	require.Empty(t, e.m.TakeDeleted())

	// After the timeout only the third is sent seq 5 again.
	e.now = e.now.Add(20 * time.Second)
	for id := range holders {
		e.heartbeat(id, nil) // keep everyone alive
	}
	plan = e.m.DeleteBlocks(e.now, entries[:1])
	require.Equal(t, 1, plan.Commands)
	require.Equal(t, []string{fmt.Sprintf("seq 5: c%d [1 2]", ca)}, deleteCmds(e.heartbeat(a.Members[2].Id, nil)))
	ack(a.Members[2].Id, 5)
	require.Equal(t, []uint64{5}, e.m.TakeDeleted())
	require.Empty(t, e.m.TakeDeleted())
	// Taken entries are forgotten: one whose purge failed starts over.
	require.Equal(t, 3, e.m.DeleteBlocks(e.now, entries[:1]).Commands)
	for _, m := range a.Members {
		require.Len(t, deleteCmds(e.heartbeat(m.Id, nil)), 1)
		ack(m.Id, 5)
	}
	require.Equal(t, []uint64{5}, e.m.TakeDeleted())

	// seq 7: a DEAD holder that did not acknowledge is sent nothing and the
	// entry waits for it.
	dead := b.Members[0].Id
	for id := range holders {
		if id != dead {
			ack(id, 7)
		}
	}
	require.Empty(t, e.m.TakeDeleted())
	e.now = e.now.Add(31 * time.Second)
	for id := range holders {
		if id != dead {
			e.heartbeat(id, nil)
		}
	}
	e.tick()
	plan = e.m.DeleteBlocks(e.now, entries[2:])
	require.Zero(t, plan.Commands)
	require.Equal(t, 1, plan.Waiting)
	// It comes back and acknowledges the resend.
	e.heartbeat(dead, nil)
	plan = e.m.DeleteBlocks(e.now, entries[2:])
	require.Equal(t, len(holders[dead]), plan.Commands)
	// An acknowledgement in the heartbeat that delivers the resend is of
	// the earlier send: it does not count for what is still queued.
	resp, err := e.m.Heartbeat(e.now, &stratov1.HeartbeatRequest{DatanodeId: dead, DeletedBlocksAcks: []uint64{7}})
	require.NoError(t, err)
	require.Len(t, deleteCmds(resp), len(holders[dead]))
	require.Empty(t, e.m.TakeDeleted())
	ack(dead, 7)
	require.Equal(t, []uint64{7}, e.m.TakeDeleted())
	require.Zero(t, e.m.PendingDeletions())
}
