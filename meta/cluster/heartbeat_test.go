package cluster

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/strato-io/strato/proto/strato/v1"
)

// Quiet heartbeats (no report, acknowledgement or failure) are served
// without mu (quietHeartbeat). These check that they keep the slow
// path's meaning: a STALE or DEAD datanode is revived as before, a
// datanode forgotten by a new leadership registers again, and no queued
// command is lost or handed out twice, however heartbeats, ticks and
// commands interleave.

// quietBeat sends datanode id a quiet heartbeat at now, with stats.
func (e *env) quietBeat(id string, now time.Time, st *stratov1.NodeStats) (*stratov1.HeartbeatResponse, error) {
	return e.m.Heartbeat(now, &stratov1.HeartbeatRequest{DatanodeId: id, Stats: st})
}

func (e *env) health(id string) stratov1.NodeHealth {
	info, ok := e.m.Datanode(id)
	require.True(e.t, ok, id)
	return info.Health
}

func TestQuietHeartbeat(t *testing.T) {
	e := newEnv(t, Options{})
	e.register("dn1", "dn2", "dn3")

	// Its time and stats are what the listings show.
	e.now = e.now.Add(time.Second)
	resp, err := e.quietBeat("dn1", e.now, &stratov1.NodeStats{Capacity: 7, Used: 3, Remaining: 4})
	require.NoError(t, err)
	require.Empty(t, resp.Commands)
	info, _ := e.m.Datanode("dn1")
	require.Equal(t, e.now.UnixMilli(), info.LastHeartbeatUnixMs)
	require.Equal(t, int64(3), info.Stats.GetUsed())
	require.Equal(t, int64(7), e.m.Space().Capacity-2*(100<<30))

	// A DEAD datanode's quiet heartbeat revives it, as a datanode change
	// (the replication pass and the usable pipelines see it).
	e.now = e.now.Add(e.m.opts.DeadAfter)
	e.heartbeat("dn2", nil)
	e.heartbeat("dn3", nil)
	e.tick()
	require.Equal(t, stratov1.NodeHealth_NODE_DEAD, e.health("dn1"))
	gen := e.m.s.nodesGen
	_, err = e.quietBeat("dn1", e.now, nil)
	require.NoError(t, err)
	require.Equal(t, stratov1.NodeHealth_NODE_HEALTHY, e.health("dn1"))
	require.Greater(t, e.m.s.nodesGen, gen)
	require.True(t, e.m.s.pipelinesDirty)

	// A command queued is handed out once.
	require.NoError(t, e.m.DiskBalancer("dn1", &stratov1.DiskBalancerCommand{Stop: true}))
	resp, err = e.quietBeat("dn1", e.now, nil)
	require.NoError(t, err)
	require.Len(t, resp.Commands, 1)
	resp, err = e.quietBeat("dn1", e.now, nil)
	require.NoError(t, err)
	require.Empty(t, resp.Commands)

	// A new leadership forgets every datanode: each registers again.
	require.NoError(t, e.m.DiskBalancer("dn2", &stratov1.DiskBalancerCommand{Stop: true}))
	e.m.BecomeLeader(e.now)
	resp, err = e.quietBeat("dn2", e.now, nil)
	require.ErrorIs(t, err, ErrUnknownNode)
	require.True(t, resp.Reregister)
	require.Empty(t, resp.Commands)
	e.register("dn2")
	resp, err = e.quietBeat("dn2", e.now, nil)
	require.NoError(t, err)
	require.Empty(t, resp.Commands, "a command of the last leadership")
}

// TestQuietHeartbeatsRace runs quiet heartbeats (and some with a report)
// against ticks that hold
// the datanodes STALE and DEAD, commands queued, registrations and a new
// leadership (run with -race). Every command queued in this leadership
// is handed out exactly once, none twice, and once the datanodes
// heartbeat again every one is HEALTHY.
func TestQuietHeartbeatsRace(t *testing.T) {
	e := newEnv(t, Options{})
	const nodes, beats = 8, 300
	ids := make([]string, nodes)
	for i := range ids {
		ids[i] = fmt.Sprintf("dn%d", i)
	}
	e.register(ids...)
	base := e.now

	var mu sync.Mutex
	got := map[uint64]int{}
	var wg sync.WaitGroup
	for _, id := range ids {
		wg.Go(func() {
			for i := range beats {
				// Each datanode's clock runs on: a tick at a later
				// time finds it STALE or DEAD, and its next heartbeat
				// takes the slow path to revive it.
				req := &stratov1.HeartbeatRequest{DatanodeId: id}
				if i%7 == 0 { // a report: the slow path, beside the quiet ones
					req.Report = &stratov1.ContainerReport{}
				}
				resp, err := e.m.Heartbeat(base.Add(time.Duration(i)*time.Second), req)
				if err != nil {
					if !resp.GetReregister() {
						t.Errorf("%s: %v, not told to register", id, err)
						return
					}
					if err := e.m.Register(base, &stratov1.RegisterRequest{
						Details: &stratov1.DatanodeDetails{Id: id, DataAddr: "127.0.0.1:1"}}); err != nil {
						t.Error(err)
						return
					}
					continue
				}
				mu.Lock()
				for _, c := range resp.Commands {
					got[c.Id]++
				}
				mu.Unlock()
			}
		})
	}
	queued := map[uint64]bool{}
	for i := range beats {
		for _, id := range ids {
			if err := e.m.DiskBalancer(id, &stratov1.DiskBalancerCommand{Stop: true}); err == nil {
				queued[e.m.lastCmdID()] = true
			}
		}
		e.m.Tick(base.Add(time.Duration(i)*time.Second + e.m.opts.DeadAfter))
		if i == beats/2 {
			e.m.BecomeLeader(base)
			queued = map[uint64]bool{} // dropped with the leadership
		}
	}
	wg.Wait()
	last := base.Add(beats * time.Second)
	for _, id := range ids {
		resp, err := e.quietBeat(id, last, nil)
		if err != nil { // its heartbeats ended before the new leadership
			require.True(t, resp.Reregister)
			require.Empty(t, resp.Commands)
			continue
		}
		for _, c := range resp.Commands {
			got[c.Id]++
		}
	}
	for id := range queued {
		require.Equal(t, 1, got[id], "command %d", id)
	}
	for id, n := range got {
		require.Equal(t, 1, n, "command %d handed out %d times", id, n)
	}
	e.m.Tick(last)
	for _, id := range ids {
		if info, ok := e.m.Datanode(id); ok {
			require.Equal(t, stratov1.NodeHealth_NODE_HEALTHY, info.Health, id)
		}
	}
}

// lastCmdID is the ID of the command queued last.
func (m *Manager) lastCmdID() uint64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.s.nextCmdID
}
