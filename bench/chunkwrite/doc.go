// Package chunkwrite is `strato bench chunk-write`, Ozone freon's cmdw
// (ChunkManagerDiskWrite): chunks written straight into one OPEN container
// of a fresh container store on local disk, no network, to compare the two
// container layouts, FILE_PER_BLOCK and FILE_PER_CHUNK, with each other and
// with RAW, a bare loop of pwrite calls on the same threads and the same
// number of files.
//
// Run measures one configuration; a Plan runs one or the original matrix
// (chunk sizes × layouts, each followed by a sync), repeated and
// interleaved, with RAW and dd (measure.DD) measured in the same run, and
// prints the original experiment's table and a bar chart of MB/s. Each run
// writes into a directory of its own, removed afterwards unless
// Options.Keep.
package chunkwrite
