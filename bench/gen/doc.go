// Package gen is `strato bench gen`, the offline data generator (Ozone
// freon's cgdn, cgscm and cgom in one): Run writes closed containers
// straight into stopped datanodes' volume directories, through the
// datanode's own container store (real block files, valid CRC32C
// checksums), three replicas round-robin over the datanodes, and records
// the containers and one key per block in meta through Raft
// (meta.Server.ImportContainer and ImportKey). The datanodes learn nothing
// until they start and report.
//
// Every key repeats keyput.Payload, as `bench ockg` writes it, so that it
// can be read back and verified. OpenDev opens a stopped `strato dev`
// directory for Run; `bench rereplicate` runs it on its own in-process
// cluster with the datanodes stopped.
//
// Run is not safe to call twice at once on the same datanodes.
package gen
