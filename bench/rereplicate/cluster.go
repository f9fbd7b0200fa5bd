package rereplicate

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/strato-io/strato/client"
	"github.com/strato-io/strato/minicluster"
	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

// CloseAll closes every open container of the cluster cl reaches and waits until all are CLOSED.
func CloseAll(ctx context.Context, cl *client.Client) error {
	deadline := time.Now().Add(2 * time.Minute)
	for {
		cs, err := listContainers(ctx, cl)
		if err != nil {
			return err
		}
		open := 0
		for _, c := range cs {
			switch c.State {
			case stratov1.ContainerState_CONTAINER_OPEN:
				open++
				if err := cl.CloseContainer(ctx, c.Id, "", "bench rereplicate"); err != nil {
					return err
				}
			case stratov1.ContainerState_CONTAINER_CLOSING:
				open++
			}
		}
		if open == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("bench: %d containers still not closed", open)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func listContainers(ctx context.Context, cl *client.Client) ([]*stratov1.ContainerInfo, error) {
	var all []*stratov1.ContainerInfo
	var after uint64
	for {
		resp, err := client.Cluster(ctx, cl, func(ctx context.Context, cc client.ClusterStubs) (*stratov1.ListContainersResponse, error) {
			return cc.ListContainers(ctx, &stratov1.ListContainersRequest{StartAfter: after, Limit: 1000})
		})
		if err != nil {
			return nil, err
		}
		if len(resp.Containers) == 0 {
			return all, nil
		}
		all = append(all, resp.Containers...)
		after = resp.Containers[len(resp.Containers)-1].Id
	}
}

// lostContainer is a container the victim held: its size (the victim's
// replica), the datanodes that held it, how many good replicas (or, erasure
// coded, indexes) it needs and, erasure coded, the victim's replica index.
type lostContainer struct {
	size    int64
	holders map[string]bool
	want    int
	index   int32
}

// want is how many good copies container c needs: its replication factor,
// or, erasure coded, one replica of each of its d+p indexes.
func want(c *stratov1.ContainerInfo) int {
	if e := c.GetErasureCoding(); e != nil {
		return int(e.Data + e.Parity)
	}
	return int(c.Replication)
}

// goodCopies counts the good copies among reps (the replicas ok accepts):
// replicas, or, for an erasure coded container, distinct replica indexes
// (a replica without one counts for nothing).
func goodCopies(ec bool, reps map[string]*stratov1.ContainerReplica, ok func(dn string, r *stratov1.ContainerReplica) bool) int {
	indexes := map[int32]bool{}
	n := 0
	for dn, r := range reps {
		if !ok(dn, r) || ec && r.ReplicaIndex == 0 {
			continue
		}
		n++
		indexes[r.ReplicaIndex] = true
	}
	if ec {
		return len(indexes)
	}
	return n
}

// containersOn returns the non-empty containers a datanode holds.
func containersOn(ctx context.Context, cl *client.Client, dn string) (map[uint64]lostContainer, error) {
	cs, err := listContainers(ctx, cl)
	if err != nil {
		return nil, err
	}
	out := map[uint64]lostContainer{}
	for _, c := range cs {
		reps, err := replicasOf(ctx, cl, c.Id)
		if err != nil {
			return nil, err
		}
		if r := reps[dn]; r != nil && r.UsedBytes > 0 {
			l := lostContainer{size: r.UsedBytes, holders: map[string]bool{}, want: want(c), index: r.ReplicaIndex}
			for id := range reps {
				l.holders[id] = true
			}
			out[c.Id] = l
		}
	}
	return out, nil
}

func replicasOf(ctx context.Context, cl *client.Client, id uint64) (map[string]*stratov1.ContainerReplica, error) {
	resp, err := client.Cluster(ctx, cl, func(ctx context.Context, cc client.ClusterStubs) (*stratov1.ContainerReplicasResponse, error) {
		return cc.ContainerReplicas(ctx, &stratov1.ContainerReplicasRequest{ContainerId: id})
	})
	if err != nil {
		return nil, err
	}
	return resp.Replicas, nil
}

// describeNewHolders names, for the first lost container with a holder it
// did not have before, its holders then and its replicas now.
func describeNewHolders(ctx context.Context, cl *client.Client, lost map[uint64]lostContainer) string {
	ids := slices.Sorted(maps.Keys(lost))
	for _, id := range ids {
		reps, err := replicasOf(ctx, cl, id)
		if err != nil {
			return err.Error()
		}
		for dn, r := range reps {
			if !lost[id].holders[dn] {
				return fmt.Sprintf("container %d: holders before the loss %v; now %s is one too (%v, bcsID %d, %d bytes)",
					id, slices.Sorted(maps.Keys(lost[id].holders)), dn, r.State, r.BcsId, r.UsedBytes)
			}
		}
	}
	return "no container shows a new holder now"
}

// waitMetaIdle waits until meta's replication work has, for two seconds
// (two of its ticks), found every container with its copies: nothing
// under-replicated, missing or in flight.
func waitMetaIdle(ctx context.Context, c *minicluster.Cluster, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	var since time.Time
	for {
		m := c.Meta().Metrics()
		idle := m.Leader && m.Containers > 0 && m.UnderReplicated == 0 && m.Missing == 0 && m.ReplicationsInFlight == 0
		switch {
		case !idle:
			since = time.Time{}
		case since.IsZero():
			since = time.Now()
		case time.Since(since) >= 2*time.Second:
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("bench: meta's replication work is not idle before the loss: %+v", m)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// waitNoCopies waits until no datanode pushes or imports a container.
func waitNoCopies(ctx context.Context, c *minicluster.Cluster, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		var busy int64
		for i := range c.DatanodeAddrs() {
			if dn := c.Datanode(i); dn != nil {
				m := dn.ReplicationMetrics()
				busy += m.PushesInFlight + m.ImportsInFlight
			}
		}
		if busy == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("bench: %d container copies still under way before the loss", busy)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// waitReplicated waits until every CLOSED container has its replicas (three,
// or, erasure coded, every index) on HEALTHY datanodes in meta's view: a
// datanode slowed down long enough to be declared dead (a busy disk during
// the bound's dd) loses its replicas in meta until it reports again, which
// must not count as copies later.
func waitReplicated(ctx context.Context, cl *client.Client, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		dns, err := client.Cluster(ctx, cl, func(ctx context.Context, cc client.ClusterStubs) (*stratov1.ListDatanodesResponse, error) {
			return cc.ListDatanodes(ctx, &stratov1.ListDatanodesRequest{})
		})
		if err != nil {
			return err
		}
		healthy := map[string]bool{}
		for _, d := range dns.Datanodes {
			healthy[d.GetDetails().GetId()] = d.Health == stratov1.NodeHealth_NODE_HEALTHY
		}
		cs, err := listContainers(ctx, cl)
		if err != nil {
			return err
		}
		short := 0
		for _, ci := range cs {
			if ci.State != stratov1.ContainerState_CONTAINER_CLOSED {
				continue
			}
			reps, err := replicasOf(ctx, cl, ci.Id)
			if err != nil {
				return err
			}
			if goodCopies(ci.ErasureCoding != nil, reps, func(dn string, _ *stratov1.ContainerReplica) bool { return healthy[dn] }) < want(ci) {
				short++
			}
		}
		if short == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("bench: %d closed containers without all their replicas on healthy datanodes", short)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// restored sums the bytes of lost containers copied so far (CLOSED
// replicas on healthy datanodes that did not hold them before), counts the
// containers still short of their good copies (three, or, erasure coded,
// every index on a datanode other than the victim: meta's missing indexes
// are empty only once the victim is declared dead), and splits the bytes by
// the datanode that received them. A copy counts the victim's replica's
// size; a rebuilt index its own (a rebuilt data member may end with the
// encoder's zero padding).
func restored(ctx context.Context, cl *client.Client, lost map[uint64]lostContainer, victim string) (copied int64, left int, perTarget map[string]int64, err error) {
	perTarget = map[string]int64{}
	dns, err := client.Cluster(ctx, cl, func(ctx context.Context, cc client.ClusterStubs) (*stratov1.ListDatanodesResponse, error) {
		return cc.ListDatanodes(ctx, &stratov1.ListDatanodesRequest{})
	})
	if err != nil {
		return 0, 0, nil, err
	}
	healthy := map[string]bool{}
	for _, d := range dns.Datanodes {
		healthy[d.GetDetails().GetId()] = d.Health == stratov1.NodeHealth_NODE_HEALTHY
	}
	ids := make([]uint64, 0, len(lost))
	for id := range lost {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		reps, err := replicasOf(ctx, cl, id)
		if err != nil {
			return 0, 0, nil, err
		}
		l := lost[id]
		ok := func(dn string, r *stratov1.ContainerReplica) bool {
			return dn != victim && healthy[dn] && r.State == stratov1.ContainerState_CONTAINER_CLOSED
		}
		for dn, r := range reps {
			if !ok(dn, r) || l.holders[dn] {
				continue
			}
			b := l.size
			if l.index != 0 {
				b = r.UsedBytes
			}
			copied += b
			perTarget[dn] += b
		}
		if goodCopies(l.index != 0, reps, ok) < l.want {
			left++
		}
	}
	return copied, left, perTarget, nil
}

// waitQuiet waits until meta sees every copy on a healthy node, its
// replication work is idle, and no copy is under way.
func waitQuiet(ctx context.Context, c *minicluster.Cluster, cl *client.Client) error {
	if err := waitReplicated(ctx, cl, 2*time.Minute); err != nil {
		return err
	}
	if err := waitMetaIdle(ctx, c, 2*time.Minute); err != nil {
		return err
	}
	return waitNoCopies(ctx, c, time.Minute)
}
