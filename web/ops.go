package web

import (
	"context"
	"net/http"

	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

// opsView is the operations page: what the cluster is busy with.
type opsView struct {
	SafeMode *stratov1.SafeModeStatus
	Queues   []Queue
	// QueuesElsewhere: this replica does not lead; its queues are empty.
	QueuesElsewhere bool
	// CopiesInFlight and DeletesInFlight are the leader's replication
	// manager's orders not yet seen done.
	CopiesInFlight, DeletesInFlight int32
	Decommissioning                 []decommission
	// DecommissionAsOf: when the replication pass that judged
	// Decommissioning started, Unix ms (0: judged now).
	DecommissionAsOf int64
	// Problems are the containers to repair (up to a page); More says
	// there are others.
	Problems []containerRow
	More     bool
}

// decommission is a datanode leaving service: its replicas, and how many
// of them still lack enough copies elsewhere.
type decommission struct {
	Node     *stratov1.DatanodeInfo
	Replicas int
	Waiting  int
}

// repairable are the problems the replication manager works on.
var repairable = []stratov1.ContainerProblem{
	stratov1.ContainerProblem_CONTAINER_PROBLEM_UNDER_REPLICATED,
	stratov1.ContainerProblem_CONTAINER_PROBLEM_MISSING,
	stratov1.ContainerProblem_CONTAINER_PROBLEM_UNHEALTHY,
	stratov1.ContainerProblem_CONTAINER_PROBLEM_MIS_REPLICATED,
}

func (c *Console) opsPage(w http.ResponseWriter, r *http.Request) error {
	ctx, cancel := c.ctx(r)
	defer cancel()
	v := opsView{}
	var sum *stratov1.ClusterSummary
	if err := c.admin(ctx, func(ctx context.Context, a stratov1.AdminServiceClient) error {
		var err error
		if v.SafeMode, err = a.GetSafeMode(ctx, &stratov1.GetSafeModeRequest{}); err != nil {
			return err
		}
		sum, err = a.GetClusterSummary(ctx, &stratov1.GetClusterSummaryRequest{})
		return err
	}); err != nil {
		return err
	}
	v.CopiesInFlight, v.DeletesInFlight = sum.GetCopiesInFlight(), sum.GetDeletesInFlight()
	v.DecommissionAsOf = sum.GetProblemsAsOfUnixMs()
	if c.opts.Queues != nil {
		v.Queues = c.opts.Queues()
		v.QueuesElsewhere = v.Queues == nil
	}
	dns, err := c.datanodes(ctx)
	if err != nil {
		return err
	}
	nodes := nodesByID(dns)
	for _, d := range sum.GetDecommissioning() {
		if n := nodes[d.GetDatanodeId()]; n != nil {
			v.Decommissioning = append(v.Decommissioning, decommission{Node: n, Replicas: int(d.GetReplicas()), Waiting: int(d.GetWaiting())})
		}
	}
	rows, next, err := c.containerRows(ctx, &stratov1.ListContainersRequest{Problems: repairable, Limit: int32(c.opts.PageSize)}, nodes)
	if err != nil {
		return err
	}
	v.Problems, v.More = rows, next != 0
	c.render(w, r, http.StatusOK, "ops", "Operations", v)
	return nil
}
