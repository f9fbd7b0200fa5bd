package cluster

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/strato-io/strato/proto/strato/v1"
)

// Placement at scale (issue: failure domains): 1,000 datanodes in 50
// racks. The allocation benchmarks report the p99 of one choice of
// members, the pass benchmark the time of one replication pass over 1M
// closed containers, a tenth of them all in one rack.
//
//	go test ./meta/cluster -run '^$' -bench 'Placement|MisReplication' -benchtime 2000x

const (
	benchNodes = 1000
	benchRacks = 50
)

// benchState is a state of n in-service datanodes spread over racks
// racks (datanode i on rack i%racks), each in one open THREE pipeline.
func benchState(n, racks int) *state {
	s := newState()
	s.safeMode = false
	for i := range n {
		id := fmt.Sprintf("dn%04d", i)
		n := &nodeState{
			details: &stratov1.DatanodeDetails{Id: id, DataAddr: fmt.Sprintf("10.0.%d.%d:9870", i/250, i%250), Rack: fmt.Sprintf("/dc1/rack%02d", i%racks)},
			health:  stratov1.NodeHealth_NODE_HEALTHY, opState: stratov1.NodeOpState_NODE_IN_SERVICE, containers: map[uint64]uint64{},
		}
		n.stats.Store(&stratov1.NodeStats{Capacity: 100 << 40, Remaining: int64(50+i%50) << 40})
		s.nodes[id] = n
	}
	ids := slices.Sorted(mapsKeys(s.nodes))
	for p := 0; p+3 <= len(ids); p += 3 {
		id := uint64(p/3 + 1)
		s.pipelines[id] = &stratov1.PipelineRecord{Id: id, Replication: three, State: stratov1.PipelineState_PIPELINE_OPEN,
			Members: []string{ids[p], ids[(p+racks+1)%len(ids)], ids[(p+2*racks+2)%len(ids)]}}
	}
	return &s
}

func mapsKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// reportP99 reports the 99th percentile of ds in microseconds.
func reportP99(b *testing.B, ds []time.Duration) {
	slices.Sort(ds)
	b.ReportMetric(float64(ds[len(ds)*99/100].Nanoseconds())/1e3, "p99-µs")
}

func benchmarkPlacement(b *testing.B, r Redundancy) {
	s := benchState(benchNodes, benchRacks)
	ds := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		// What a pipeline's creation does: the candidates, then the choice.
		start := time.Now()
		members, err := ChooseMembers(s.pipelineCandidates(r, Exclude{}), r.Members(), 2)
		ds = append(ds, time.Since(start))
		if err != nil {
			b.Fatal(err)
		}
		if racks := len(s.spread(nil, members)); racks != len(members) {
			b.Fatalf("%v over %d racks", members, racks)
		}
	}
	b.StopTimer()
	reportP99(b, ds)
}

func BenchmarkPlacementPipelineThree(b *testing.B) { benchmarkPlacement(b, Replicated(three)) }

func BenchmarkPlacementPipelineRS63(b *testing.B) {
	benchmarkPlacement(b, ErasureCoded(&stratov1.ErasureCodingRecord{Codec: stratov1.ErasureCodec_ERASURE_CODEC_RS, Data: 6, Parity: 3, CellSize: 1 << 20}))
}

func BenchmarkPlacementCopyTarget(b *testing.B) {
	s := benchState(benchNodes, benchRacks)
	c := &containerState{info: &stratov1.ContainerRecord{Id: 1, Replication: three, State: stratov1.ContainerState_CONTAINER_CLOSED}}
	for _, id := range []string{"dn0000", "dn0050"} {
		c.replicas.put(replica{node: id, State: stratov1.ContainerState_CONTAINER_CLOSED})
	}
	now := time.Unix(1_700_000_000, 0)
	ds := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		t := s.chooseTarget(now, c, nil, 10, nil)
		ds = append(ds, time.Since(start))
		if rackOf(s.nodes[t].details) == "/dc1/rack00" {
			b.Fatalf("target %s on the replicas' rack", t)
		}
	}
	b.StopTimer()
	reportP99(b, ds)
}

// BenchmarkMisReplicationPass: one replication pass over 1M closed THREE
// containers on 1,000 datanodes in 50 racks, a tenth of them with their
// three copies in one rack (mis-replicated, mended within the limits).
func BenchmarkMisReplicationPass(b *testing.B) {
	const containers = 1_000_000
	s := benchState(benchNodes, benchRacks)
	ids := slices.Sorted(mapsKeys(s.nodes))
	for i := range containers {
		id := uint64(i + 1)
		c := &containerState{info: &stratov1.ContainerRecord{Id: id, Replication: three, State: stratov1.ContainerState_CONTAINER_CLOSED},
			replicas: make(replicaSet, 0, 3)}
		step := 1 // over three racks
		if i%10 == 0 {
			step = benchRacks // all on one rack
		}
		for r := range 3 {
			dn := ids[(i+r*step)%len(ids)]
			c.replicas.put(replica{node: dn, State: stratov1.ContainerState_CONTAINER_CLOSED})
		}
		s.addContainer(c)
	}
	o := Options{}
	o.EnsureDefaults()
	now := time.Unix(1_700_000_000, 0)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		_, rep := planReplication(s, &o, now, 10)
		if rep.Containers != containers || rep.MisReplicated != containers/10 {
			b.Fatalf("pass: %+v", rep)
		}
	}
}

// TestChooseTargetSampled: past targetScanMax datanodes a copy's target
// is chosen among a random sample: always a valid one (in service, not a
// holder, under its import limit), on a rack without a copy, spread over
// many datanodes; and when only one datanode is left under the limit, the
// full scan still finds it.
func TestChooseTargetSampled(t *testing.T) {
	s := benchState(benchNodes, benchRacks)
	ids := s.sortedNodeIDs()
	c := &containerState{info: &stratov1.ContainerRecord{Id: 1, Replication: three, State: stratov1.ContainerState_CONTAINER_CLOSED}}
	for _, id := range ids[:2] { // two copies, racks 0 and 1
		c.replicas.put(replica{node: id, State: stratov1.ContainerState_CONTAINER_CLOSED})
	}
	now := time.Unix(1_700_000_000, 0)
	chosen := map[string]bool{}
	for range 200 {
		got := s.chooseTarget(now, c, nil, 10, nil)
		require.NotEmpty(t, got)
		require.NotContains(t, c.replicas, got)
		rack := rackOf(s.nodes[got].details)
		require.NotEqual(t, rackOf(s.nodes[ids[0]].details), rack)
		require.NotEqual(t, rackOf(s.nodes[ids[1]].details), rack)
		chosen[got] = true
	}
	require.Greater(t, len(chosen), 20, "targets spread over the datanodes")

	imports := map[string]int{}
	for _, id := range ids {
		imports[id] = 10
	}
	last := ids[len(ids)-1]
	imports[last] = 0
	require.Equal(t, last, s.chooseTarget(now, c, imports, 10, nil), "the one datanode under its limit")
	imports[last] = 10
	require.Empty(t, s.chooseTarget(now, c, imports, 10, nil), "none under its limit")
}
