package web

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"

	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

// overview is the first page's data.
type overview struct {
	Replicas   []replicaView
	SafeMode   *stratov1.SafeModeStatus
	Datanodes  int
	Health     []count
	OpStates   []count
	Capacity   int64
	Used       int64
	Remaining  int64
	Volumes    int
	Buckets    int
	Objects    int64 // keys and directories
	Bytes      int64 // logical bytes of committed keys
	Pipelines  []count
	Containers int
	States     []count
	Problems   []count
	// ProblemsAsOf: when the replication pass that judged Problems
	// started, Unix ms (0: judged as the summary was made).
	ProblemsAsOf int64
}

// toInt converts a summary's counts for tally.
func toInt[N int32 | int64](m map[string]N) map[string]int {
	out := make(map[string]int, len(m))
	for k, v := range m {
		out[k] = int(v)
	}
	return out
}

// replicaView is one meta replica as it answers for itself.
type replicaView struct {
	ID     uint64
	Addr   string
	Status *stratov1.MetaStatusResponse
	Err    string
}

// JSON names for /api/overview.
func (o *overview) MarshalJSON() ([]byte, error) {
	counts := func(cs []count) map[string]int {
		m := map[string]int{}
		for _, c := range cs {
			m[c.Label] = c.N
		}
		return m
	}
	type rep struct {
		ID      uint64 `json:"id"`
		Addr    string `json:"addr"`
		Role    string `json:"role,omitempty"`
		Term    uint64 `json:"term,omitempty"`
		Commit  uint64 `json:"commit,omitempty"`
		Applied uint64 `json:"applied,omitempty"`
		Error   string `json:"error,omitempty"`
	}
	var reps []rep
	for _, r := range o.Replicas {
		x := rep{ID: r.ID, Addr: r.Addr, Error: r.Err}
		if r.Status != nil {
			x.Role, x.Term, x.Commit, x.Applied = r.Status.Role, r.Status.Term, r.Status.Commit, r.Status.Applied
		}
		reps = append(reps, x)
	}
	return json.Marshal(map[string]any{
		"meta_replicas": reps, "safe_mode": o.SafeMode.GetInSafeMode(),
		"datanodes": o.Datanodes, "datanodes_by_health": counts(o.Health), "datanodes_by_op_state": counts(o.OpStates),
		"capacity_bytes": o.Capacity, "used_bytes": o.Used, "remaining_bytes": o.Remaining,
		"volumes": o.Volumes, "buckets": o.Buckets, "objects": o.Objects, "bytes": o.Bytes,
		"pipelines_by_state": counts(o.Pipelines), "containers": o.Containers, "containers_by_state": counts(o.States),
		"container_problems": counts(o.Problems), "container_problems_as_of_unix_ms": o.ProblemsAsOf,
	})
}

var (
	healthOrder  = []string{"HEALTHY", "STALE", "DEAD"}
	opOrder      = []string{"IN_SERVICE", "DECOMMISSIONING", "DECOMMISSIONED", "ENTERING_MAINTENANCE", "IN_MAINTENANCE"}
	cstateOrder  = []string{"OPEN", "CLOSING", "CLOSED", "UNHEALTHY", "DELETED"}
	pstateOrder  = []string{"OPEN", "CLOSED"}
	badHealth    = map[string]bool{"STALE": true, "DEAD": true}
	badCState    = map[string]bool{"UNHEALTHY": true}
	badProblem   = map[string]bool{problemUnder: true, problemMissing: true, problemBad: true}
	problemOrder = problems
)

func (c *Console) overview(ctx context.Context) (*overview, error) {
	o := &overview{}
	o.Replicas = c.metaReplicas(ctx)
	if err := c.admin(ctx, func(ctx context.Context, a stratov1.AdminServiceClient) error {
		var err error
		o.SafeMode, err = a.GetSafeMode(ctx, &stratov1.GetSafeModeRequest{})
		return err
	}); err != nil {
		return nil, err
	}
	var sum *stratov1.ClusterSummary
	if err := c.admin(ctx, func(ctx context.Context, a stratov1.AdminServiceClient) error {
		var err error
		sum, err = a.GetClusterSummary(ctx, &stratov1.GetClusterSummaryRequest{})
		return err
	}); err != nil {
		return nil, err
	}
	o.Datanodes = int(sum.GetDatanodes())
	o.Capacity, o.Used, o.Remaining = sum.GetCapacity(), sum.GetUsed(), sum.GetRemaining()
	o.Health = tally(healthOrder, toInt(sum.GetDatanodesByHealth()), func(l string) string { return "/datanodes?health=" + strings.ToLower(l) }, badHealth)
	o.OpStates = tally(opOrder, toInt(sum.GetDatanodesByOpState()), func(l string) string { return "/datanodes?op=" + strings.ToLower(l) }, nil)
	if err := c.namespaceSize(ctx, o); err != nil {
		return nil, err
	}
	o.Pipelines = tally(pstateOrder, toInt(sum.GetPipelinesByState()), func(l string) string { return "/pipelines?state=" + strings.ToLower(l) }, nil)
	o.Containers = int(sum.GetContainers())
	o.States = tally(cstateOrder, toInt(sum.GetContainersByState()), func(l string) string { return "/containers?state=" + strings.ToLower(l) }, badCState)
	probs := map[string]int{}
	for name, n := range sum.GetContainersByProblem() {
		probs[problemNames[stratov1.ContainerProblem(stratov1.ContainerProblem_value["CONTAINER_PROBLEM_"+name])]] = int(n)
	}
	o.Problems = tally(problemOrder, probs, func(l string) string { return "/containers?problem=" + l }, badProblem)
	o.ProblemsAsOf = sum.GetProblemsAsOfUnixMs()
	return o, nil
}

// metaReplicas asks every member this replica knows for its own status.
func (c *Console) metaReplicas(ctx context.Context) []replicaView {
	self, err := c.replicaStatus(ctx, c.opts.Meta)
	if err != nil {
		return []replicaView{{Addr: c.opts.Meta, Err: errorText(err)}}
	}
	members := self.GetMembers()
	if len(members) == 0 {
		members = []*stratov1.MetaMember{{Id: self.GetId(), Addr: c.opts.Meta}}
	}
	out := make([]replicaView, len(members))
	var done = make(chan struct{}, len(members))
	for i, m := range members {
		go func() {
			defer func() { done <- struct{}{} }()
			out[i] = replicaView{ID: m.GetId(), Addr: m.GetAddr()}
			if m.GetId() == self.GetId() {
				out[i].Status = self
				return
			}
			st, err := c.replicaStatus(ctx, m.GetAddr())
			if err != nil {
				out[i].Err = errorText(err)
				return
			}
			out[i].Status = st
		}()
	}
	for range members {
		<-done
	}
	slices.SortFunc(out, func(a, b replicaView) int { return cmp.Compare(a.ID, b.ID) })
	return out
}

// namespaceSize sums the volumes and buckets.
func (c *Console) namespaceSize(ctx context.Context, o *overview) error {
	for after := ""; ; {
		var vr *stratov1.ListVolumesResponse
		if err := c.ns(ctx, func(ctx context.Context, n stratov1.NamespaceServiceClient) error {
			var err error
			vr, err = n.ListVolumes(ctx, &stratov1.ListVolumesRequest{StartAfter: after})
			return err
		}); err != nil {
			return err
		}
		for _, v := range vr.GetVolumes() {
			o.Volumes++
			o.Buckets += int(v.GetUsedNamespace())
			o.Bytes += v.GetUsedBytes()
			for bafter := ""; ; {
				var br *stratov1.ListBucketsResponse
				if err := c.ns(ctx, func(ctx context.Context, n stratov1.NamespaceServiceClient) error {
					var err error
					br, err = n.ListBuckets(ctx, &stratov1.ListBucketsRequest{Volume: v.GetName(), StartAfter: bafter})
					return err
				}); err != nil {
					return err
				}
				for _, b := range br.GetBuckets() {
					o.Objects += b.GetUsedNamespace()
					bafter = b.GetName()
				}
				if !br.GetTruncated() || len(br.GetBuckets()) == 0 {
					break
				}
			}
			after = v.GetName()
		}
		if !vr.GetTruncated() || len(vr.GetVolumes()) == 0 {
			return nil
		}
	}
}

func (c *Console) overviewPage(w http.ResponseWriter, r *http.Request) error {
	ctx, cancel := c.ctx(r)
	defer cancel()
	o, err := c.overview(ctx)
	if err != nil {
		return err
	}
	c.render(w, r, http.StatusOK, "overview", "Overview", o)
	return nil
}

func (c *Console) overviewAPI(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := c.ctx(r)
	defer cancel()
	o, err := c.overview(ctx)
	if err != nil {
		writeJSON(w, statusOf(err), map[string]string{"error": errorText(err)})
		return
	}
	writeJSON(w, http.StatusOK, o)
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		code, b = http.StatusInternalServerError, []byte(`{"error":"encoding failed"}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	_, _ = w.Write(append(b, '\n'))
}

// datanodesView is the datanodes page.
type datanodesView struct {
	Rows   []*stratov1.DatanodeInfo
	Health string
	Op     string
	Next   string // the after= of the next page
	Total  int
}

func (c *Console) datanodesPage(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	health, op, after := strings.ToLower(q.Get("health")), strings.ToLower(q.Get("op")), q.Get("after")
	if health != "" && !slices.Contains(healthOrder, strings.ToUpper(health)) {
		return httpErrorf(http.StatusBadRequest, "health %q: want healthy, stale or dead", health)
	}
	if op != "" && !slices.Contains(opOrder, strings.ToUpper(op)) {
		return httpErrorf(http.StatusBadRequest, "op %q: want in_service, decommissioning or decommissioned", op)
	}
	limit, err := c.limit(r)
	if err != nil {
		return err
	}
	ctx, cancel := c.ctx(r)
	defer cancel()
	dns, err := c.datanodes(ctx)
	if err != nil {
		return err
	}
	v := datanodesView{Health: health, Op: op, Total: len(dns)}
	for _, d := range dns {
		if d.GetDetails().GetId() <= after && after != "" ||
			health != "" && enumName(d.GetHealth().String(), "NODE_") != strings.ToUpper(health) ||
			op != "" && enumName(d.GetOpState().String(), "NODE_") != strings.ToUpper(op) {
			continue
		}
		if len(v.Rows) == limit {
			v.Next = v.Rows[len(v.Rows)-1].GetDetails().GetId()
			break
		}
		v.Rows = append(v.Rows, d)
	}
	c.render(w, r, http.StatusOK, "datanodes", "Datanodes", v)
	return nil
}

// datanodeView is one datanode's page.
type datanodeView struct {
	Node      *stratov1.DatanodeInfo
	Pipelines []*stratov1.PipelineInfo
}

func (c *Console) datanodePage(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	ctx, cancel := c.ctx(r)
	defer cancel()
	dns, err := c.datanodes(ctx)
	if err != nil {
		return err
	}
	v := datanodeView{Node: nodesByID(dns)[id]}
	if v.Node == nil {
		return notFound("datanode", id)
	}
	ps, err := c.pipelines(ctx)
	if err != nil {
		return err
	}
	for _, p := range ps {
		if slices.Contains(p.GetMembers(), id) {
			v.Pipelines = append(v.Pipelines, p)
		}
	}
	c.render(w, r, http.StatusOK, "datanode", "Datanode "+id, v)
	return nil
}

// pipelinesView is the pipelines page.
type pipelinesView struct {
	Rows  []*stratov1.PipelineInfo
	State string
	Next  uint64
	Total int
}

func (c *Console) pipelinesPage(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	state := strings.ToLower(q.Get("state"))
	if state != "" && !slices.Contains(pstateOrder, strings.ToUpper(state)) {
		return httpErrorf(http.StatusBadRequest, "state %q: want open or closed", state)
	}
	after, limit, err := c.idPage(r)
	if err != nil {
		return err
	}
	ctx, cancel := c.ctx(r)
	defer cancel()
	ps, err := c.pipelines(ctx)
	if err != nil {
		return err
	}
	v := pipelinesView{State: state, Total: len(ps)}
	for _, p := range ps {
		if p.GetId() <= after || state != "" && enumName(p.GetState().String(), "PIPELINE_") != strings.ToUpper(state) {
			continue
		}
		if len(v.Rows) == limit {
			v.Next = v.Rows[len(v.Rows)-1].GetId()
			break
		}
		v.Rows = append(v.Rows, p)
	}
	c.render(w, r, http.StatusOK, "pipelines", "Pipelines", v)
	return nil
}

// containersView is the containers page.
type containersView struct {
	Rows     []containerRow
	State    string
	Problem  string
	Datanode string
	Problems []string
	States   []string
	Next     uint64 // after= of the next page; 0: none
}

// containersPage lists containers a page at a time, filtered by meta
// (state, problem, a datanode holding a replica).
func (c *Console) containersPage(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	state, problem, dn := strings.ToLower(q.Get("state")), strings.ToLower(q.Get("problem")), q.Get("datanode")
	req := &stratov1.ListContainersRequest{DatanodeId: dn}
	if state != "" {
		st, ok := stratov1.ContainerState_value["CONTAINER_"+strings.ToUpper(state)]
		if !ok || !slices.Contains(cstateOrder, strings.ToUpper(state)) {
			return httpErrorf(http.StatusBadRequest, "state %q: want one of %s", state, strings.ToLower(strings.Join(cstateOrder, ", ")))
		}
		req.States = []stratov1.ContainerState{stratov1.ContainerState(st)}
	}
	switch {
	case problem == "any":
		req.Problems = repairable
	case problem != "":
		p := problemCode(problem)
		if p == stratov1.ContainerProblem_CONTAINER_PROBLEM_UNSPECIFIED {
			return httpErrorf(http.StatusBadRequest, "problem %q: want any, %s", problem, strings.Join(problems, ", "))
		}
		req.Problems = []stratov1.ContainerProblem{p}
	}
	after, limit, err := c.idPage(r)
	if err != nil {
		return err
	}
	req.StartAfter, req.Limit = after, int32(limit)
	ctx, cancel := c.ctx(r)
	defer cancel()
	dns, err := c.datanodes(ctx)
	if err != nil {
		return err
	}
	nodes := nodesByID(dns)
	if dn != "" && nodes[dn] == nil {
		return notFound("datanode", dn)
	}
	v := containersView{State: state, Problem: problem, Datanode: dn, Problems: problems}
	for _, s := range cstateOrder {
		v.States = append(v.States, strings.ToLower(s))
	}
	if v.Rows, v.Next, err = c.containerRows(ctx, req, nodes); err != nil {
		return err
	}
	c.render(w, r, http.StatusOK, "containers", "Containers", v)
	return nil
}

// containerView is one container's page.
type containerView struct {
	Row      containerRow
	Pipeline *stratov1.PipelineInfo
}

func (c *Console) containerPage(w http.ResponseWriter, r *http.Request) error {
	id, err := uintParam("container ID", r.PathValue("id"))
	if err != nil {
		return err
	}
	ctx, cancel := c.ctx(r)
	defer cancel()
	dns, err := c.datanodes(ctx)
	if err != nil {
		return err
	}
	var resp *stratov1.ContainerReplicasResponse
	if err := c.admin(ctx, func(ctx context.Context, a stratov1.AdminServiceClient) error {
		var err error
		resp, err = a.ContainerReplicas(ctx, &stratov1.ContainerReplicasRequest{ContainerId: id})
		return err
	}); err != nil {
		if statusOf(err) == http.StatusNotFound {
			err = notFound("container", id)
		}
		return err
	}
	v := containerView{Row: judge(resp.GetContainer(), resp.GetReplicas(), nodesByID(dns))}
	ps, err := c.pipelines(ctx)
	if err != nil {
		return err
	}
	for _, p := range ps {
		if p.GetId() == resp.GetContainer().GetPipelineId() {
			v.Pipeline = p
		}
	}
	c.render(w, r, http.StatusOK, "container", fmt.Sprintf("Container %d", id), v)
	return nil
}
