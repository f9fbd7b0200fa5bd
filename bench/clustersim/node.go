package clustersim

import (
	"sync"

	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

// A simulated datanode: its replicas, the reports made of them, and the
// commands from meta it carries out.

// node is one simulated datanode: its replicas, and those changed since
// its last report.
type node struct {
	id       string
	details  *stratov1.DatanodeDetails
	dn       stratov1.DatanodeServiceClient // its connection (Options.Conns)
	mu       sync.Mutex
	replicas map[uint64]simReplica
	changed  map[uint64]bool
	beats    int
	// dead: stopped (Options.Kill); it sends nothing more.
	dead bool
}

// simReplica is a replica as a simulated datanode keeps it: by value, so
// that a million containers' replicas are not three million messages for
// the collector of the process that meta shares (a datanode keeps its
// replicas in a process of its own). Reports are made of it as they are
// sent.
type simReplica struct {
	state       stratov1.ContainerState
	used, count int64
	bcs         uint64
}

// proto is r, container id's replica, as a report lists it.
func (r simReplica) proto(id uint64) *stratov1.ContainerReplica {
	return &stratov1.ContainerReplica{ContainerId: id, State: r.state, UsedBytes: r.used, BlockCount: r.count, BcsId: r.bcs}
}

// report is a report of d's replicas: all of them (full), or those
// changed since the last one; d.mu is held.
func (d *node) report(full bool) *stratov1.ContainerReport {
	rep := &stratov1.ContainerReport{Full: full}
	if full {
		rep.Replicas = make([]*stratov1.ContainerReplica, 0, len(d.replicas))
		for id, r := range d.replicas {
			rep.Replicas = append(rep.Replicas, r.proto(id))
		}
	} else {
		for id := range d.changed {
			rep.Replicas = append(rep.Replicas, d.replicas[id].proto(id))
		}
	}
	clear(d.changed)
	return rep
}

func (d *node) set(id uint64, r simReplica) {
	d.mu.Lock()
	d.replicas[id] = r
	d.changed[id] = true
	d.mu.Unlock()
}

// carryOut does what a datanode does with meta's commands, as far as its
// reports show: a closed container's replica becomes CLOSED, a deleted one
// goes, a copy lands on its target at once (which reports it at its next
// heartbeat). Block deletions are not simulated.
func (s *sim) carryOut(d *node, cmds []*stratov1.DatanodeCommand) {
	for _, c := range cmds {
		switch {
		case c.GetReplicateContainer() != nil:
			rc := c.GetReplicateContainer()
			d.mu.Lock()
			r, ok := d.replicas[rc.GetContainerId()]
			d.mu.Unlock()
			if t := s.byID[rc.GetTarget().GetId()]; ok && t != nil {
				t.set(rc.GetContainerId(), r)
			}
		case c.GetCloseContainer() != nil:
			id := c.GetCloseContainer().GetContainerId()
			d.mu.Lock()
			if r, ok := d.replicas[id]; ok {
				r.state = stratov1.ContainerState_CONTAINER_CLOSED
				d.replicas[id] = r
				d.changed[id] = true
			}
			d.mu.Unlock()
		case c.GetDeleteContainer() != nil:
			id := c.GetDeleteContainer().GetContainerId()
			d.mu.Lock()
			delete(d.replicas, id)
			delete(d.changed, id)
			d.mu.Unlock()
		}
	}
}
