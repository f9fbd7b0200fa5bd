// Package balance is `strato bench balance`: the container balancer's move
// rate against its bandwidth cap, and what balancing costs a foreground
// writer (decision 0084).
//
// The cluster is half full datanodes and half empty ones, as an operator
// has it after adding datanodes: Run stops the second half, writes
// Config.Size at replication THREE into the first, closes every container,
// and starts the second half again. Every datanode reports a disk of the
// same capacity (minicluster.CappedDisk), so that the full ones are
// Config.Fill of it and the balancer has work on datanodes that share one
// real disk.
//
// Then, for Config.Rounds rounds in alternating order, a TeraGen-style
// foreground write (teragen.Run through the client: Config.Writers writers,
// Config.Rows rows in all, hsync and close) runs alone, and while the
// balancer moves containers at its cap (started before the write, stopped
// after it, its moves left to end before the next run). The cost is the
// ratio of the medians.
//
// Last, the balancer runs to its end with nothing else running: the move
// rate is the bytes the sources sent over the window from the first byte
// to the last, against the cap times the sources, and the disk's copy bound
// (rereplicate.MeasureBound) measured in the same run. Every key is read
// back and compared at the end.
package balance
