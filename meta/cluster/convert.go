package cluster

import (
	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

// The cluster state stores records (PipelineRecord, ContainerRecord) and
// shows API messages; the Manager's readers convert, here.

// PipelineInfo is the API's view of a pipeline record.
func PipelineInfo(r *stratov1.PipelineRecord) *stratov1.PipelineInfo {
	if r == nil {
		return nil
	}
	return &stratov1.PipelineInfo{Id: r.Id, Replication: r.Replication, Members: append([]string(nil), r.Members...),
		State: r.State, CreatedUnixMs: r.CreatedUnixMs, ErasureCoding: ErasureCoding(r.ErasureCoding)}
}

// ContainerInfo is the API's view of a container record.
func ContainerInfo(r *stratov1.ContainerRecord) *stratov1.ContainerInfo {
	if r == nil {
		return nil
	}
	return &stratov1.ContainerInfo{Id: r.Id, State: r.State, PipelineId: r.PipelineId, Replication: r.Replication,
		CreatedUnixMs: r.CreatedUnixMs, AllocatedBytes: r.AllocatedBytes, ErasureCoding: ErasureCoding(r.ErasureCoding)}
}

// ErasureCoding is the API's view of a stored erasure coding config (nil
// for nil).
func ErasureCoding(r *stratov1.ErasureCodingRecord) *stratov1.ErasureCoding {
	if r == nil {
		return nil
	}
	return &stratov1.ErasureCoding{Codec: r.Codec, Data: r.Data, Parity: r.Parity, CellSize: r.CellSize}
}
