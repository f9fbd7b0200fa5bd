// Package scanner is a datanode's background scanner: it looks for rot in
// the CLOSED containers a datanode holds before a reader finds it, as
// Ozone's container scanners and HDFS's block scanner do.
//
// # What it does
//
// Two kinds of scan run on every volume, one container at a time per
// volume:
//
//   - a metadata scan (container.Container.ScanMeta) of every CLOSED
//     container every Options.MetaInterval (3 hours): rows that do not
//     decode, block files missing or shorter than their rows say. It
//     stats files and reads no data.
//   - a data scan (container.Container.ScanWith) of every CLOSED container
//     every Options.DataInterval (7 days): every committed byte read and
//     checked against its stored checksums, at no more than
//     Options.Bandwidth bytes per second per volume.
//
// A container found damaged is marked UNHEALTHY (container.MarkUnhealthy)
// and handed to Options.Unhealthy, which the datanode uses to report it
// to meta in the next heartbeat, at once; meta then copies a good replica
// elsewhere and deletes the bad one. Request asks for a scan of one
// container next (strato admin container scan).
//
// # Never racing writers
//
// Only CLOSED containers are scanned: an OPEN one is still being written,
// one being imported is not in the Store's list until the import ends. A
// container deleted during its scan is skipped, and a block deleted during
// it (DeleteBlocks of a CLOSED container) is not counted bad: every bad
// block is looked up again before the container is marked.
//
// # Concurrency
//
// Start runs a goroutine per volume until Stop; Request and Metrics may be
// called from any goroutine. Time is Options.Clock's: tests give a fake
// clock and advance it.
package scanner
