package web

import (
	"cmp"
	"context"
	"net/http"
	"slices"
	"strings"
	"sync"

	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

// Container problem states, as the replication manager judges them: a good
// copy is a CLOSED replica on a HEALTHY, in-service datanode.
const (
	problemUnder   = "under-replicated" // closed, fewer good copies than its replication
	problemMissing = "missing"          // closed, no good copy anywhere
	problemBad     = "unhealthy"        // a replica, or the container, is UNHEALTHY
	problemOver    = "over-replicated"  // closed, more good copies than its replication
)

var problems = []string{problemUnder, problemMissing, problemBad, problemOver}

// containerRow is a container with its replicas and their judgement.
type containerRow struct {
	Info     *stratov1.ContainerInfo
	Replicas []replicaRow
	Good     int
	Want     int
	Problem  string // "" when fine
}

type replicaRow struct {
	Datanode string
	Host     string
	Health   stratov1.NodeHealth
	OpState  stratov1.NodeOpState
	Replica  *stratov1.ContainerReplica
	Good     bool
}

// nodesByID indexes datanodes by ID.
func nodesByID(dns []*stratov1.DatanodeInfo) map[string]*stratov1.DatanodeInfo {
	m := make(map[string]*stratov1.DatanodeInfo, len(dns))
	for _, d := range dns {
		m[d.GetDetails().GetId()] = d
	}
	return m
}

// judge builds a container's row from its replicas.
func judge(info *stratov1.ContainerInfo, reps map[string]*stratov1.ContainerReplica, nodes map[string]*stratov1.DatanodeInfo) containerRow {
	row := containerRow{Info: info, Want: int(info.GetReplication())}
	unhealthy := info.GetState() == stratov1.ContainerState_CONTAINER_UNHEALTHY
	for id, r := range reps {
		rr := replicaRow{Datanode: id, Replica: r}
		if n := nodes[id]; n != nil {
			rr.Host, rr.Health, rr.OpState = n.GetDetails().GetHostname(), n.GetHealth(), n.GetOpState()
		}
		rr.Good = r.GetState() == stratov1.ContainerState_CONTAINER_CLOSED && rr.Health == stratov1.NodeHealth_NODE_HEALTHY &&
			rr.OpState == stratov1.NodeOpState_NODE_IN_SERVICE
		if rr.Good {
			row.Good++
		}
		if r.GetState() == stratov1.ContainerState_CONTAINER_UNHEALTHY {
			unhealthy = true
		}
		row.Replicas = append(row.Replicas, rr)
	}
	slices.SortFunc(row.Replicas, func(a, b replicaRow) int { return strings.Compare(a.Datanode, b.Datanode) })
	closed := info.GetState() == stratov1.ContainerState_CONTAINER_CLOSED
	switch {
	case closed && row.Good == 0:
		row.Problem = problemMissing
	case closed && row.Good < row.Want:
		row.Problem = problemUnder
	case unhealthy:
		row.Problem = problemBad
	case closed && row.Good > row.Want:
		row.Problem = problemOver
	}
	return row
}

// judgeAll asks for the replicas of every container of infos (eight calls
// at a time) and judges each.
func (c *Console) judgeAll(ctx context.Context, infos []*stratov1.ContainerInfo, nodes map[string]*stratov1.DatanodeInfo) ([]containerRow, error) {
	rows := make([]containerRow, len(infos))
	errs := make([]error, len(infos))
	sem := make(chan struct{}, 8)
	var wg sync.WaitGroup
	for i, info := range infos {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			var resp *stratov1.ContainerReplicasResponse
			errs[i] = c.admin(ctx, func(ctx context.Context, a stratov1.AdminServiceClient) error {
				var err error
				resp, err = a.ContainerReplicas(ctx, &stratov1.ContainerReplicasRequest{ContainerId: info.GetId()})
				return err
			})
			if errs[i] == nil {
				rows[i] = judge(info, resp.GetReplicas(), nodes)
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return rows, nil
}

func (c *Console) datanodes(ctx context.Context) ([]*stratov1.DatanodeInfo, error) {
	var resp *stratov1.ListDatanodesResponse
	err := c.admin(ctx, func(ctx context.Context, a stratov1.AdminServiceClient) error {
		var err error
		resp, err = a.ListDatanodes(ctx, &stratov1.ListDatanodesRequest{})
		return err
	})
	dns := resp.GetDatanodes()
	slices.SortFunc(dns, func(a, b *stratov1.DatanodeInfo) int {
		return strings.Compare(a.GetDetails().GetId(), b.GetDetails().GetId())
	})
	return dns, err
}

func (c *Console) pipelines(ctx context.Context) ([]*stratov1.PipelineInfo, error) {
	var resp *stratov1.ListPipelinesResponse
	err := c.admin(ctx, func(ctx context.Context, a stratov1.AdminServiceClient) error {
		var err error
		resp, err = a.ListPipelines(ctx, &stratov1.ListPipelinesRequest{})
		return err
	})
	ps := resp.GetPipelines()
	slices.SortFunc(ps, func(a, b *stratov1.PipelineInfo) int { return cmp.Compare(a.GetId(), b.GetId()) })
	return ps, err
}

// listContainers is one page of ListContainers.
func (c *Console) listContainers(ctx context.Context, after uint64, limit int) ([]*stratov1.ContainerInfo, error) {
	var resp *stratov1.ListContainersResponse
	err := c.admin(ctx, func(ctx context.Context, a stratov1.AdminServiceClient) error {
		var err error
		resp, err = a.ListContainers(ctx, &stratov1.ListContainersRequest{StartAfter: after, Limit: int32(limit)})
		return err
	})
	return resp.GetContainers(), err
}

// count is a label and how many have it, for the overview's tallies.
type count struct {
	Label string
	N     int
	Link  string
	Bad   bool // a state that needs attention
}

// tally counts labels in a fixed order (those never seen are left out
// unless always).
func tally(order []string, seen map[string]int, link func(string) string, bad map[string]bool) []count {
	var out []count
	for _, l := range order {
		if n, ok := seen[l]; ok {
			out = append(out, count{Label: l, N: n, Link: link(l), Bad: bad[l] && n > 0})
		}
	}
	return out
}

// notFound is the 404 of an unknown object.
func notFound(what string, id any) error {
	return httpErrorf(http.StatusNotFound, "no %s %v", what, id)
}
