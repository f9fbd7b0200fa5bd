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
	Decommissioning []decommission
	// Problems are the containers to repair (up to a page), of Checked
	// examined.
	Problems []containerRow
	Checked  int
	More     bool
}

// decommission is a datanode leaving service: its replicas, and how many
// of them still lack enough copies elsewhere.
type decommission struct {
	Node     *stratov1.DatanodeInfo
	Replicas int
	Waiting  int
}

func (c *Console) opsPage(w http.ResponseWriter, r *http.Request) error {
	ctx, cancel := c.ctx(r)
	defer cancel()
	v := opsView{}
	if err := c.admin(ctx, func(ctx context.Context, a stratov1.AdminServiceClient) error {
		var err error
		v.SafeMode, err = a.GetSafeMode(ctx, &stratov1.GetSafeModeRequest{})
		return err
	}); err != nil {
		return err
	}
	if c.opts.Queues != nil {
		v.Queues = c.opts.Queues()
		v.QueuesElsewhere = v.Queues == nil
	}
	dns, err := c.datanodes(ctx)
	if err != nil {
		return err
	}
	nodes := nodesByID(dns)
	leaving := map[string]*decommission{}
	for _, d := range dns {
		if d.GetOpState() == stratov1.NodeOpState_NODE_DECOMMISSIONING {
			dc := &decommission{Node: d}
			leaving[d.GetDetails().GetId()] = dc
		}
	}
	// Every container's replicas, up to ScanLimit: the problems, and the
	// decommissioning nodes' progress.
	for after := uint64(0); v.Checked < c.opts.ScanLimit; {
		want := min(1000, c.opts.ScanLimit-v.Checked)
		page, err := c.listContainers(ctx, after, want)
		if err != nil {
			return err
		}
		rows, err := c.judgeAll(ctx, page, nodes)
		if err != nil {
			return err
		}
		v.Checked += len(rows)
		for _, row := range rows {
			if row.Problem != "" && row.Problem != problemOver {
				if len(v.Problems) < c.opts.PageSize {
					v.Problems = append(v.Problems, row)
				} else {
					v.More = true
				}
			}
			for _, rep := range row.Replicas {
				if dc := leaving[rep.Datanode]; dc != nil {
					dc.Replicas++
					if row.Good < row.Want {
						dc.Waiting++
					}
				}
			}
		}
		if len(page) < want {
			break
		}
		after = page[len(page)-1].GetId()
	}
	for _, d := range dns {
		if dc := leaving[d.GetDetails().GetId()]; dc != nil {
			v.Decommissioning = append(v.Decommissioning, *dc)
		}
	}
	c.render(w, r, http.StatusOK, "ops", "Operations", v)
	return nil
}
