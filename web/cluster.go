package web

import (
	"cmp"
	"context"
	"net/http"
	"slices"
	"strings"

	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

// Container problem states, as the replication manager judges them: a good
// copy is a CLOSED replica on a HEALTHY, in-service datanode.
const (
	problemUnder   = "under-replicated" // closed, fewer good copies than its replication
	problemMissing = "missing"          // closed, no good copy anywhere
	problemBad     = "unhealthy"        // a replica, or the container, is UNHEALTHY
	problemOver    = "over-replicated"  // closed, more good copies than its replication
	problemRacks   = "mis-replicated"   // closed, enough good copies, not spread over the racks as the rules want
)

var problems = []string{problemUnder, problemMissing, problemBad, problemOver, problemRacks}

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

// problemNames maps the replication manager's judgement to the console's
// words; problemOf and problemCode translate.
var problemNames = map[stratov1.ContainerProblem]string{
	stratov1.ContainerProblem_CONTAINER_PROBLEM_UNDER_REPLICATED: problemUnder,
	stratov1.ContainerProblem_CONTAINER_PROBLEM_MISSING:          problemMissing,
	stratov1.ContainerProblem_CONTAINER_PROBLEM_UNHEALTHY:        problemBad,
	stratov1.ContainerProblem_CONTAINER_PROBLEM_OVER_REPLICATED:  problemOver,
	stratov1.ContainerProblem_CONTAINER_PROBLEM_MIS_REPLICATED:   problemRacks,
}

func problemCode(name string) stratov1.ContainerProblem {
	for p, n := range problemNames {
		if n == name {
			return p
		}
	}
	return stratov1.ContainerProblem_CONTAINER_PROBLEM_UNSPECIFIED
}

// judge builds a container's row from its replicas; the judgement (good
// copies, problem) is meta's, the replicas' marks show which count.
func judge(info *stratov1.ContainerInfo, reps map[string]*stratov1.ContainerReplica, nodes map[string]*stratov1.DatanodeInfo) containerRow {
	row := containerRow{Info: info, Want: int(info.GetReplication()), Good: int(info.GetGoodCopies()), Problem: problemNames[info.GetProblem()]}
	for id, r := range reps {
		rr := replicaRow{Datanode: id, Replica: r}
		if n := nodes[id]; n != nil {
			rr.Host, rr.Health, rr.OpState = n.GetDetails().GetHostname(), n.GetHealth(), n.GetOpState()
		}
		rr.Good = r.GetState() == stratov1.ContainerState_CONTAINER_CLOSED && rr.Health == stratov1.NodeHealth_NODE_HEALTHY &&
			rr.OpState == stratov1.NodeOpState_NODE_IN_SERVICE
		row.Replicas = append(row.Replicas, rr)
	}
	slices.SortFunc(row.Replicas, func(a, b replicaRow) int { return strings.Compare(a.Datanode, b.Datanode) })
	return row
}

// containerRows is one page of ListContainers matching req's filters, each
// container judged with its replicas; next is the cursor of the following
// page (0 at the end).
func (c *Console) containerRows(ctx context.Context, req *stratov1.ListContainersRequest, nodes map[string]*stratov1.DatanodeInfo) (rows []containerRow, next uint64, err error) {
	req.WithReplicas = true
	var resp *stratov1.ListContainersResponse
	if err := c.admin(ctx, func(ctx context.Context, a stratov1.AdminServiceClient) error {
		var err error
		resp, err = a.ListContainers(ctx, req)
		return err
	}); err != nil {
		return nil, 0, err
	}
	for _, r := range resp.GetReplicas() {
		rows = append(rows, judge(r.GetContainer(), r.GetReplicas(), nodes))
	}
	if len(rows) == int(req.Limit) && len(rows) > 0 {
		next = rows[len(rows)-1].Info.GetId()
	}
	return rows, next, nil
}

// datanodes lists every datanode, a page of ListDatanodes at a time (meta
// answers at most a page of them at once).
func (c *Console) datanodes(ctx context.Context) ([]*stratov1.DatanodeInfo, error) {
	const page = 1000
	var dns []*stratov1.DatanodeInfo
	var err error
	for after := ""; ; {
		var resp *stratov1.ListDatanodesResponse
		err = c.admin(ctx, func(ctx context.Context, a stratov1.AdminServiceClient) error {
			var err error
			resp, err = a.ListDatanodes(ctx, &stratov1.ListDatanodesRequest{StartAfter: after, Limit: page})
			return err
		})
		got := resp.GetDatanodes()
		dns = append(dns, got...)
		if err != nil || len(got) < page || got[len(got)-1].GetDetails().GetId() <= after {
			break
		}
		after = got[len(got)-1].GetDetails().GetId()
	}
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
