package replication

import "runtime/pprof"

// Profile label keys and roles. A datanode runs its pushes and imports
// under pprof labels (LabelDatanode: its ID, LabelRole: RolePush or
// RoleImport), so that a CPU profile of a process that runs several
// datanodes (strato dev, bench rereplicate) attributes each side's cost:
// the samples of the source's pushes include the kernel time of sendfile,
// as the profiler's per-thread timers count system time.
const (
	LabelDatanode = "strato.datanode"
	LabelRole     = "strato.replication"
	RolePush      = "push"
	RoleImport    = "import"
)

// ProfileLabels returns the labels of datanode id's pushes or imports.
func ProfileLabels(id, role string) pprof.LabelSet {
	return pprof.Labels(LabelDatanode, id, LabelRole, role)
}
