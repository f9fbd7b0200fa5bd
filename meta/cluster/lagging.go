package cluster

import (
	"slices"

	"github.com/strato-io/strato/proto/strato/v1"
)

// laggingReplicas returns the datanodes whose CLOSED replica of a container
// stopped short of the others: a lower block commit sequence ID means it
// missed PutBlocks its peers applied (a follower cut off mid-write whose
// pipeline went on without it). Such a replica is not a copy of the
// container any more; the others, at the highest bcsID, are. Replicas not
// CLOSED are not judged (still closing, or already unhealthy). The result is
// sorted.
func laggingReplicas(replicas replicaSet) []string {
	var top uint64
	for _, r := range replicas.all() {
		if r.State == stratov1.ContainerState_CONTAINER_CLOSED {
			top = max(top, r.BcsId)
		}
	}
	var out []string
	for id, r := range replicas.all() {
		if r.State == stratov1.ContainerState_CONTAINER_CLOSED && r.BcsId < top {
			out = append(out, id)
		}
	}
	slices.Sort(out)
	return out
}
