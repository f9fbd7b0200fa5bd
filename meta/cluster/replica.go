package cluster

import (
	"hash/maphash"
	"iter"
	"slices"

	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

// replica is one datanode's reported replica of a container, as the
// cluster manager keeps it: the fields of a ContainerReplica but the
// container's ID (the container holds it), by value. A million containers
// of three replicas were three million messages and a million maps for
// the collector to trace (decision 0101); as replicaSets they are a
// million small arrays, whose only pointers are the datanodes' IDs.
type replica struct {
	// node is the datanode's ID, shared with its registration
	// (applyReportLocked), not a string of its own.
	node string
	// hash is what the datanode reported of it, hashed (reportDigest).
	hash         uint64
	UsedBytes    int64
	BlockCount   int64
	BcsId        uint64
	State        stratov1.ContainerState
	ReplicaIndex int32
}

// GetState is r's state, or the zero state for a missing replica (a nil
// *replica), as a nil message's getter answers.
func (r *replica) GetState() stratov1.ContainerState {
	if r == nil {
		return stratov1.ContainerState_CONTAINER_STATE_UNSPECIFIED
	}
	return r.State
}

// proto is r as the API sends it, for container cid.
func (r *replica) proto(cid uint64) *stratov1.ContainerReplica {
	return &stratov1.ContainerReplica{ContainerId: cid, State: r.State, UsedBytes: r.UsedBytes,
		BlockCount: r.BlockCount, BcsId: r.BcsId, ReplicaIndex: r.ReplicaIndex}
}

// replicaOf is rep as the manager keeps it, held by node.
func replicaOf(node string, rep *stratov1.ContainerReplica) replica {
	return replica{node: node, hash: replicaHash(rep), UsedBytes: rep.UsedBytes, BlockCount: rep.BlockCount,
		BcsId: rep.BcsId, State: rep.State, ReplicaIndex: rep.ReplicaIndex}
}

// replicaSet is a container's replicas, at most one a datanode, in no
// particular order. A container has a handful, so a lookup is a scan.
//
// The *replica that get and all hand out point into the set: they are
// good until the set changes (put, del), and a change through one changes
// the set.
type replicaSet []replica

// find is the position of node's replica, or -1.
func (rs replicaSet) find(node string) int {
	for i := range rs {
		if rs[i].node == node {
			return i
		}
	}
	return -1
}

// get is node's replica, or nil.
func (rs replicaSet) get(node string) *replica {
	if i := rs.find(node); i >= 0 {
		return &rs[i]
	}
	return nil
}

// has: node holds a replica.
func (rs replicaSet) has(node string) bool { return rs.find(node) >= 0 }

// put records r (r.node's replica), in place of the one it had.
func (rs *replicaSet) put(r replica) {
	if i := rs.find(r.node); i >= 0 {
		(*rs)[i] = r
		return
	}
	if len(*rs) == cap(*rs) {
		// Room for three at first, then one more at a time: most
		// containers settle at three replicas, and a doubled array
		// would be half empty a million times over.
		grown := make(replicaSet, len(*rs), max(3, len(*rs)+1))
		copy(grown, *rs)
		*rs = grown
	}
	*rs = append(*rs, r)
}

// del forgets node's replica, and reports whether there was one.
func (rs *replicaSet) del(node string) bool {
	i := rs.find(node)
	if i < 0 {
		return false
	}
	last := len(*rs) - 1
	(*rs)[i] = (*rs)[last]
	(*rs)[last] = replica{}
	*rs = (*rs)[:last]
	return true
}

// all yields each datanode's ID and its replica. The set must not change
// while it runs.
func (rs replicaSet) all() iter.Seq2[string, *replica] {
	return func(yield func(string, *replica) bool) {
		for i := range rs {
			if !yield(rs[i].node, &rs[i]) {
				return
			}
		}
	}
}

// ids are the datanodes' IDs, sorted.
func (rs replicaSet) ids() []string {
	out := make([]string, len(rs))
	for i := range rs {
		out[i] = rs[i].node
	}
	slices.Sort(out)
	return out
}

// clone is a copy of the set, to change without changing rs.
func (rs replicaSet) clone() replicaSet { return slices.Clone(rs) }

// protos is the set as the API sends it, for container cid, by datanode.
func (rs replicaSet) protos(cid uint64) map[string]*stratov1.ContainerReplica {
	out := make(map[string]*stratov1.ContainerReplica, len(rs))
	for i := range rs {
		out[rs[i].node] = rs[i].proto(cid)
	}
	return out
}

// reportDigest sums up a full container report: how many replicas it
// lists, and the sum of their hashes under a seed drawn when the process
// starts. Two reports with the same digest list the same replicas in the
// same states; two that differ have one chance in 2^64 of sharing it.
// Ok is false for a report that has none (an incremental report, or one
// with deletions). A datanode's (nodeState.reported) sums up the same way
// what it reported of the replicas the map holds.
type reportDigest struct {
	sum uint64
	n   int
	ok  bool
}

func (d *reportDigest) add(h uint64)  { d.sum += h; d.n++ }
func (d *reportDigest) drop(h uint64) { d.sum -= h; d.n-- }

var digestSeed = maphash.MakeSeed()

// digestKey is what a report says of one replica.
type digestKey struct {
	container, bcs      uint64
	used, blocks        int64
	state, replicaIndex int32
}

// digestOf is full report r's digest; it reads only r, so it is taken
// before the manager's lock.
func digestOf(r *stratov1.ContainerReport) reportDigest {
	if !r.GetFull() || len(r.Deleted) > 0 {
		return reportDigest{}
	}
	d := reportDigest{ok: true}
	for _, rep := range r.Replicas {
		d.add(replicaHash(rep))
	}
	return d
}

// replicaHash is what a report says of one replica, hashed.
func replicaHash(rep *stratov1.ContainerReplica) uint64 {
	return maphash.Comparable(digestSeed, digestKey{container: rep.ContainerId, bcs: rep.BcsId,
		used: rep.UsedBytes, blocks: rep.BlockCount, state: int32(rep.State), replicaIndex: rep.ReplicaIndex})
}
