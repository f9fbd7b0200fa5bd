package minicluster

import "github.com/cockroachdb/pebble/v2/vfs"

// CappedDisk is a file system (FS, vfs.Default when nil) reporting a disk
// of Capacity bytes, all of it free, whatever the disk under it: a
// datanode given it (Options.DatanodeFS) counts as used only what its
// containers hold, over Capacity. Tests and benchmarks of the balancers
// make a few megabytes or gigabytes of data a use worth balancing with it,
// on datanodes that share one real disk.
type CappedDisk struct {
	vfs.FS
	Capacity uint64
}

// GetDiskUsage implements vfs.FS.
func (d CappedDisk) GetDiskUsage(string) (vfs.DiskUsage, error) {
	return vfs.DiskUsage{TotalBytes: d.Capacity, AvailBytes: d.Capacity}, nil
}

// CappedDisks is an Options.DatanodeFS giving every datanode a CappedDisk
// of capacity bytes over the real file system.
func CappedDisks(capacity uint64) func(int) vfs.FS {
	return func(int) vfs.FS { return CappedDisk{FS: vfs.Default, Capacity: capacity} }
}
