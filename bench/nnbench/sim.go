package nnbench

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
)

// simCluster is the simulated datanodes of blockReport and replication,
// with the containers each was given by real block allocations.
type simCluster struct {
	nodes      []SimDatanode
	byID       map[string]int
	containers []map[uint64]struct{} // per node
	reports    [][]uint64            // per node, padded
}

func simDatanodeID(i int) string { return fmt.Sprintf("sim-dn-%04d", i) }

// setupBlockReport does NNThroughputBenchmark's blockReport input
// generation: register the datanodes, create files with blocks allocated by
// meta, and form each datanode's report. strato's datanodes report
// containers, not blocks; a report lists the node's containers, padded with
// containers meta does not know (as Hadoop pads with blocks that do not
// exist) up to blocksPerReport entries.
func (r *metaRun) setupBlockReport(ctx context.Context, datanodes, blocksPerReport, blocksPerFile, replication int) (*simCluster, error) {
	replication = min(replication, datanodes)
	nrBlocks := int(math.Ceil(float64(blocksPerReport*datanodes) / float64(replication)))
	nrFiles := int(math.Ceil(float64(nrBlocks) / float64(blocksPerFile)))
	sc := &simCluster{byID: map[string]int{}}
	for i := 0; i < datanodes; i++ {
		dn := SimDatanode{Index: i, ID: simDatanodeID(i), Addr: fmt.Sprintf("127.0.0.1:%d", 1+i)}
		if err := r.t.RegisterDatanode(ctx, dn); err != nil {
			return nil, fmt.Errorf("registering %s: %w", dn.ID, err)
		}
		sc.nodes = append(sc.nodes, dn)
		sc.byID[dn.ID] = i
		sc.containers = append(sc.containers, map[uint64]struct{}{})
	}
	r.progress("creating %d files with %d blocks each", nrFiles, blocksPerFile)
	g := newNameGenerator(r.base(), 100)
	for i := 0; i < nrFiles; i++ {
		blocks, err := r.t.CreateFileWithBlocks(ctx, g.next("ThroughputBench"), blocksPerFile, replication)
		if err != nil {
			return nil, err
		}
		for _, b := range blocks {
			for _, id := range b.Nodes {
				if n, ok := sc.byID[id]; ok {
					sc.containers[n][b.Container] = struct{}{}
				}
			}
		}
	}
	// Padding uses IDs far above any real container.
	const padBase = 1 << 62
	for i := range sc.nodes {
		rep := make([]uint64, 0, blocksPerReport)
		for c := range sc.containers[i] {
			rep = append(rep, c)
		}
		slices.Sort(rep)
		for j := 0; len(rep) < blocksPerReport; j++ {
			rep = append(rep, padBase+uint64(j))
		}
		sc.reports = append(sc.reports, rep)
	}
	return sc, nil
}

func (sc *simCluster) distribution() string {
	parts := make([]string, len(sc.nodes))
	for i := range sc.nodes {
		parts[i] = fmt.Sprint(len(sc.containers[i]))
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

func (r *metaRun) blockReport(ctx context.Context, datanodes, reports, blocksPerReport, blocksPerFile int) (Stats, error) {
	sc, err := r.setupBlockReport(ctx, datanodes, blocksPerReport, blocksPerFile, r.o.Replication)
	if err != nil {
		return Stats{}, err
	}
	// One goroutine per datanode, each sending its own report.
	split := splitOps(reports, datanodes)
	in := make([][]string, datanodes)
	for i, n := range split {
		for j := 0; j < n; j++ {
			in[i] = append(in[i], sc.nodes[i].ID)
		}
	}
	st, err := r.timed(ctx, sliceInputs(in), func(ctx context.Context, id string) error {
		i := sc.byID[id]
		return r.t.ContainerReport(ctx, sc.nodes[i], sc.reports[i], false)
	})
	st.Inputs = []string{
		fmt.Sprintf("reports = %d", reports),
		fmt.Sprintf("datanodes = %d %s", datanodes, sc.distribution()),
		fmt.Sprintf("blocksPerReport = %d", blocksPerReport),
		fmt.Sprintf("blocksPerFile = %d", blocksPerFile),
	}
	return st, err
}

// replication measures how fast meta decides re-replication work after
// datanodes are decommissioned: one thread calls ReplicationWork until a
// pass schedules nothing.
func (r *metaRun) replication(ctx context.Context) (Stats, error) {
	o := r.o
	nodes := o.Datanodes
	sc, err := r.setupBlockReport(ctx, nodes, o.TotalBlocks*o.Replication/nodes, nodes, o.Replication)
	if err != nil {
		return Stats{}, err
	}
	if err := r.t.CloseContainers(ctx); err != nil {
		return Stats{}, err
	}
	for i, dn := range sc.nodes {
		if err := r.t.ContainerReport(ctx, dn, sc.reports[i], true); err != nil {
			return Stats{}, err
		}
	}
	decommissioned := 0
	for i := 0; i < o.NodesToDecommission; i++ {
		dn := sc.nodes[nodes-1-i]
		decommissioned += len(sc.containers[dn.Index])
		if err := r.t.Decommission(ctx, dn); err != nil {
			return Stats{}, err
		}
	}
	required := o.TotalBlocks * o.Replication * o.NodesToDecommission * 2 / (nodes * nodes)
	var st Stats
	pending := 0
	start := time.Now()
	for {
		t0 := time.Now()
		n, err := r.t.ReplicationWork(ctx, o.NodeReplicationLimit)
		st.Cumulative += time.Since(t0)
		if err != nil {
			return st, err
		}
		st.Ops++
		pending += n
		if n == 0 {
			break
		}
	}
	st.Elapsed = time.Since(start)
	st.Inputs = []string{
		fmt.Sprintf("numOpsRequired = %d", required),
		fmt.Sprintf("datanodes = %d %s", nodes, sc.distribution()),
		fmt.Sprintf("decommissioned datanodes = %d", o.NodesToDecommission),
		fmt.Sprintf("datanode replication limit = %d", o.NodeReplicationLimit),
		fmt.Sprintf("total blocks = %d", o.TotalBlocks),
	}
	rate := 0.0
	if st.Elapsed > 0 {
		rate = float64(pending) / st.Elapsed.Seconds()
	}
	st.Extra = []string{
		fmt.Sprintf("decommissioned blocks = %d", decommissioned),
		fmt.Sprintf("pending replications = %d", pending),
		fmt.Sprintf("replications per sec: %.1f", rate),
	}
	return st, nil
}
