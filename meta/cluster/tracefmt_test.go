package cluster

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
	"github.com/stretchr/testify/require"

	"github.com/strato-io/strato/proto/strato/v1"
)

// The trace language's parsing and printing (trace_test.go).

// counts prints a map of counts by name, sorted.
func counts[V int32 | int64](m map[string]V) string {
	if len(m) == 0 {
		return "none"
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%s=%d", k, m[k]))
	}
	return strings.Join(parts, " ")
}

// positional lists the arguments without a value, but for the flags.
func positional(d *datadriven.TestData) []string {
	var out []string
	for _, a := range d.CmdArgs {
		if len(a.Vals) == 0 && a.Key != "bare" && a.Key != "full" {
			out = append(out, a.Key)
		}
	}
	return out
}

func stringArg(d *datadriven.TestData, key string) string {
	if a, ok := d.Arg(key); ok && len(a.Vals) > 0 {
		return a.Vals[0]
	}
	return ""
}

func listArg(d *datadriven.TestData, key string) []string {
	if a, ok := d.Arg(key); ok {
		return slices.DeleteFunc(slices.Clone(a.Vals), func(v string) bool { return v == "" })
	}
	return nil
}

func durationArg(t *testing.T, d *datadriven.TestData, key string) time.Duration {
	s := stringArg(d, key)
	if s == "" {
		return 0
	}
	dur, err := time.ParseDuration(s)
	require.NoError(t, err)
	return dur
}

func parseUint(t *testing.T, s string) uint64 {
	v, err := strconv.ParseUint(strings.TrimPrefix(s, "c"), 10, 64)
	require.NoError(t, err)
	return v
}

// parseSize reads a byte count with an optional K, M, G or T suffix.
func parseSize(t *testing.T, s string) int64 {
	shift := map[byte]uint{'K': 10, 'M': 20, 'G': 30, 'T': 40}[s[len(s)-1]]
	if shift > 0 {
		s = s[:len(s)-1]
	}
	v, err := strconv.ParseInt(s, 10, 64)
	require.NoError(t, err)
	return v << shift
}

func parseRedundancy(t *testing.T, name string) Redundancy {
	switch name {
	case "one":
		return Replicated(one)
	case "three":
		return Replicated(three)
	case "rs-3-2":
		return ErasureCoded(rs32)
	case "xor-2-1":
		return ErasureCoded(&stratov1.ErasureCodingRecord{Codec: stratov1.ErasureCodec_ERASURE_CODEC_XOR, Data: 2, Parity: 1, CellSize: 64 << 10})
	}
	t.Fatalf("unknown redundancy %q", name)
	return Redundancy{}
}

func redundancyName(repl stratov1.ReplicationFactor, e *stratov1.ErasureCoding) string {
	if e != nil {
		return Redundancy{EC: &stratov1.ErasureCodingRecord{Codec: e.Codec, Data: e.Data, Parity: e.Parity, CellSize: e.CellSize}}.String()
	}
	return strings.ToLower(strings.TrimPrefix(repl.String(), "REPLICATION_"))
}

// parseReplica reads container:state[:idx=N][:bcs=N][:used=N].
func parseReplica(t *testing.T, s string) *stratov1.ContainerReplica {
	parts := strings.Split(s, ":")
	require.GreaterOrEqual(t, len(parts), 2, "replica %q is container:state[:key=value...]", s)
	st, ok := stratov1.ContainerState_value["CONTAINER_"+strings.ToUpper(parts[1])]
	require.True(t, ok, "replica %q: unknown state", s)
	r := &stratov1.ContainerReplica{ContainerId: parseUint(t, parts[0]), State: stratov1.ContainerState(st)}
	for _, kv := range parts[2:] {
		k, v, _ := strings.Cut(kv, "=")
		switch k {
		case "idx":
			r.ReplicaIndex = int32(parseUint(t, v))
		case "bcs":
			r.BcsId = parseUint(t, v)
		case "used":
			r.UsedBytes = parseSize(t, v)
		default:
			t.Fatalf("replica %q: unknown %q", s, k)
		}
	}
	return r
}

func describeReplica(r *stratov1.ContainerReplica) string {
	s := strings.TrimPrefix(r.State.String(), "CONTAINER_")
	if r.ReplicaIndex > 0 {
		s += fmt.Sprintf("#%d", r.ReplicaIndex)
	}
	return s
}

func describeProposal(c *stratov1.ClusterCommand) string {
	switch op := c.Op.(type) {
	case *stratov1.ClusterCommand_AddPipeline:
		p := op.AddPipeline
		return fmt.Sprintf("add-pipeline p%d %s %v", p.Id, redundancyName(p.Replication, ErasureCoding(p.ErasureCoding)), p.Members)
	case *stratov1.ClusterCommand_ClosePipeline:
		return fmt.Sprintf("close-pipeline p%d", op.ClosePipeline)
	case *stratov1.ClusterCommand_AddContainer:
		a := op.AddContainer
		return fmt.Sprintf("add-container on p%d %s", a.PipelineId, redundancyName(a.Replication, ErasureCoding(a.ErasureCoding)))
	case *stratov1.ClusterCommand_SetContainerState:
		return fmt.Sprintf("c%d %s", op.SetContainerState.ContainerId, strings.TrimPrefix(op.SetContainerState.State.String(), "CONTAINER_"))
	case *stratov1.ClusterCommand_ReserveLocalIds:
		return fmt.Sprintf("reserve %d block IDs", op.ReserveLocalIds)
	case *stratov1.ClusterCommand_SetNodeOpState:
		line := fmt.Sprintf("%s %s", op.SetNodeOpState.DatanodeId, strings.TrimPrefix(op.SetNodeOpState.OpState.String(), "NODE_"))
		if ms := op.SetNodeOpState.MaintenanceEndUnixMs; ms != 0 {
			line += " until " + time.UnixMilli(ms).UTC().Format(time.TimeOnly)
		}
		return line
	case *stratov1.ClusterCommand_SetClusterId:
		return "cluster ID " + op.SetClusterId
	}
	return fmt.Sprintf("%v", c)
}

func describeCommand(c *stratov1.DatanodeCommand) string {
	switch x := c.Cmd.(type) {
	case *stratov1.DatanodeCommand_CloseContainer:
		return fmt.Sprintf("close c%d (p%d)", x.CloseContainer.ContainerId, x.CloseContainer.PipelineId)
	case *stratov1.DatanodeCommand_ReplicateContainer:
		return fmt.Sprintf("replicate c%d to %s", x.ReplicateContainer.ContainerId, x.ReplicateContainer.Target.GetId())
	case *stratov1.DatanodeCommand_ReconstructEcContainer:
		r := x.ReconstructEcContainer
		var srcs []string
		for _, s := range r.Sources {
			srcs = append(srcs, fmt.Sprintf("%d:%s", s.ReplicaIndex, s.Datanode.GetId()))
		}
		return fmt.Sprintf("rebuild c%d index %d from %v (%s)", r.ContainerId, r.ReplicaIndex, srcs, redundancyName(0, r.ErasureCoding))
	case *stratov1.DatanodeCommand_DeleteContainer:
		return fmt.Sprintf("delete c%d", x.DeleteContainer.ContainerId)
	case *stratov1.DatanodeCommand_CreateContainer:
		return fmt.Sprintf("create c%d index %d (p%d)", x.CreateContainer.ContainerId, x.CreateContainer.ReplicaIndex, x.CreateContainer.Pipeline.GetId())
	case *stratov1.DatanodeCommand_DeleteBlocks:
		return fmt.Sprintf("delete-blocks seq %d c%d %v", x.DeleteBlocks.Seq, x.DeleteBlocks.ContainerId, x.DeleteBlocks.LocalIds)
	}
	return fmt.Sprintf("%v", c)
}

// commandContainer is the container a command is about.
func commandContainer(c *stratov1.DatanodeCommand) uint64 {
	switch x := c.GetCmd().(type) {
	case *stratov1.DatanodeCommand_ReplicateContainer:
		return x.ReplicateContainer.ContainerId
	case *stratov1.DatanodeCommand_ReconstructEcContainer:
		return x.ReconstructEcContainer.ContainerId
	}
	return 0
}

func describeReport(r ReplicationReport) string {
	var parts []string
	for _, f := range []struct {
		name string
		n    int
	}{{"containers", r.Containers}, {"under-replicated", r.UnderReplicated}, {"over-replicated", r.OverReplicated},
		{"mis-replicated", r.MisReplicated}, {"scheduled", r.Scheduled}, {"deletes", r.Deletes}, {"blocked", r.BlockedByLimits}, {"in-flight", r.InFlight}} {
		if f.n != 0 {
			parts = append(parts, fmt.Sprintf("%s=%d", f.name, f.n))
		}
	}
	if len(r.Missing) > 0 {
		parts = append(parts, fmt.Sprintf("missing=%v", r.Missing))
	}
	if len(r.Decommissioned) > 0 {
		parts = append(parts, fmt.Sprintf("decommissioned=%v", r.Decommissioned))
	}
	if len(r.InMaintenance) > 0 {
		parts = append(parts, fmt.Sprintf("in-maintenance=%v", r.InMaintenance))
	}
	if len(parts) == 0 {
		return "replication: -"
	}
	return "replication: " + strings.Join(parts, " ")
}
