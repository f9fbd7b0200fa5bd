package telemetry

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/strato-io/strato/datanode"
	"github.com/strato-io/strato/datanode/replication"
	"github.com/strato-io/strato/datanode/scanner"
	"github.com/strato-io/strato/meta"
	"github.com/strato-io/strato/meta/consensus"
	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

// collectFunc is a collector whose metrics are made at each scrape from a
// server's snapshot. It describes nothing (an unchecked collector), so its
// series may come and go (volumes, disks).
type collectFunc func(ch chan<- prometheus.Metric)

func (f collectFunc) Describe(chan<- *prometheus.Desc)    {}
func (f collectFunc) Collect(ch chan<- prometheus.Metric) { f(ch) }

// metric is one series of a snapshot: its description and how to read it.
type metric[S any] struct {
	desc *prometheus.Desc
	typ  prometheus.ValueType
	val  func(S) float64
}

func gauge[S any](name, help string, f func(S) float64) metric[S] {
	return metric[S]{prometheus.NewDesc(name, help, nil, nil), prometheus.GaugeValue, f}
}

func counter[S any](name, help string, f func(S) float64) metric[S] {
	return metric[S]{prometheus.NewDesc(name, help, nil, nil), prometheus.CounterValue, f}
}

func emit[S any](ch chan<- prometheus.Metric, s S, ms []metric[S]) {
	for _, m := range ms {
		ch <- prometheus.MustNewConstMetric(m.desc, m.typ, m.val(s))
	}
}

func b2f(v bool) float64 {
	if v {
		return 1
	}
	return 0
}

var metaMetrics = []metric[meta.Metrics]{
	gauge("strato_meta_leader", "1 if this replica leads its Raft group", func(m meta.Metrics) float64 { return b2f(m.Leader) }),
	gauge("strato_meta_datanodes", "datanodes registered", func(m meta.Metrics) float64 { return float64(m.Datanodes) }),
	gauge("strato_meta_datanodes_healthy", "datanodes HEALTHY", func(m meta.Metrics) float64 { return float64(m.HealthyDatanodes) }),
	gauge("strato_meta_datanodes_stale", "datanodes STALE (silent for a while: no new pipelines on them)", func(m meta.Metrics) float64 { return float64(m.StaleDatanodes) }),
	gauge("strato_meta_datanodes_dead", "datanodes DEAD (silent too long: their replicas are copied elsewhere)", func(m meta.Metrics) float64 { return float64(m.DeadDatanodes) }),
	gauge("strato_meta_closed_containers", "closed containers examined by the last replication pass", func(m meta.Metrics) float64 { return float64(m.Containers) }),
	gauge("strato_meta_under_replicated_containers", "closed containers with fewer good copies than their replication", func(m meta.Metrics) float64 { return float64(m.UnderReplicated) }),
	gauge("strato_meta_closing_containers", "containers CLOSING: waiting for their replicas to close", func(m meta.Metrics) float64 { return float64(m.ClosingContainers) }),
	gauge("strato_meta_mis_replicated_containers", "closed containers with the copies they need, not spread over the racks as the rack rules want", func(m meta.Metrics) float64 { return float64(m.MisReplicated) }),
	gauge("strato_meta_missing_containers", "closed containers with no good copy anywhere", func(m meta.Metrics) float64 { return float64(m.Missing) }),
	gauge("strato_meta_replications_in_flight", "container copies commanded and not yet reported", func(m meta.Metrics) float64 { return float64(m.ReplicationsInFlight) }),
	counter("strato_meta_replication_passes_total", "replication passes run (--replication-interval)", func(m meta.Metrics) float64 { return float64(m.ReplicationPasses) }),
	gauge("strato_meta_replication_pass_seconds", "how long the last replication pass took (its steps and the heartbeats between them)", func(m meta.Metrics) float64 { return m.ReplicationPassTook.Seconds() }),
	counter("strato_meta_full_reports_total", "datanodes' full container reports handled as leader (registrations among them)", func(m meta.Metrics) float64 { return float64(m.FullReports) }),
	counter("strato_meta_full_reports_repeated_total", "full container reports that said only what meta already held of the datanode's replicas, and so were not read", func(m meta.Metrics) float64 { return float64(m.RepeatedFullReports) }),
	counter("strato_meta_replications_scheduled_total", "container copies commanded", func(m meta.Metrics) float64 { return float64(m.ReplicationsScheduled) }),
	counter("strato_meta_replica_deletes_total", "extra or unhealthy replicas deleted", func(m meta.Metrics) float64 { return float64(m.ReplicaDeletes) }),
	gauge("strato_meta_balancer_running", "1 while the container balancer runs (on the leader)", func(m meta.Metrics) float64 { return b2f(m.Balancer.Running) }),
	gauge("strato_meta_balancer_iterations", "iterations the balancer's run has done", func(m meta.Metrics) float64 { return float64(m.Balancer.Iterations) }),
	gauge("strato_meta_balancer_moved_containers", "container replicas the balancer's run has moved", func(m meta.Metrics) float64 { return float64(m.Balancer.MovedContainers) }),
	gauge("strato_meta_balancer_moved_bytes", "bytes the balancer's run has moved", func(m meta.Metrics) float64 { return float64(m.Balancer.MovedBytes) }),
	gauge("strato_meta_balancer_moves_in_flight", "balancer moves started and not done", func(m meta.Metrics) float64 { return float64(m.Balancer.MovesInFlight) }),
	gauge("strato_meta_balancer_bytes_in_flight", "bytes of the balancer moves started and not done", func(m meta.Metrics) float64 { return float64(m.Balancer.BytesInFlight) }),
	gauge("strato_meta_balancer_bytes_left", "bytes datanodes out of the threshold must shed or take (as of the last threshold set, default 10%)", func(m meta.Metrics) float64 { return float64(m.Balancer.BytesLeft) }),
	gauge("strato_meta_balancer_spread", "largest used fraction of capacity of an in-service datanode less the smallest", func(m meta.Metrics) float64 { return m.Balancer.Spread }),
	counter("strato_meta_lifecycle_rounds_total", "lifecycle rounds finished over every bucket with rules", func(m meta.Metrics) float64 { return float64(m.Lifecycle.Rounds) }),
	gauge("strato_meta_lifecycle_round_active", "1 while a lifecycle round is under way", func(m meta.Metrics) float64 { return b2f(m.Lifecycle.Active) }),
	counter("strato_meta_lifecycle_buckets_total", "buckets with lifecycle rules walked by the rounds", func(m meta.Metrics) float64 { return float64(m.Lifecycle.Buckets) }),
	counter("strato_meta_lifecycle_scanned_total", "versions and multipart uploads the lifecycle rounds looked at", func(m meta.Metrics) float64 { return float64(m.Lifecycle.Scanned) }),
	counter("strato_meta_lifecycle_expired_total", "current versions expired by lifecycle rules (deleted, or hidden by a delete marker)", func(m meta.Metrics) float64 { return float64(m.Lifecycle.Expired) }),
	counter("strato_meta_lifecycle_noncurrent_deleted_total", "noncurrent versions deleted by lifecycle rules", func(m meta.Metrics) float64 { return float64(m.Lifecycle.NoncurrentDeleted) }),
	counter("strato_meta_lifecycle_delete_markers_removed_total", "expired delete markers removed by lifecycle rules", func(m meta.Metrics) float64 { return float64(m.Lifecycle.MarkersRemoved) }),
	counter("strato_meta_lifecycle_uploads_aborted_total", "incomplete multipart uploads aborted by lifecycle rules", func(m meta.Metrics) float64 { return float64(m.Lifecycle.UploadsAborted) }),
	counter("strato_meta_lifecycle_skipped_total", "lifecycle deletes refused (retention) or overtaken by a newer write", func(m meta.Metrics) float64 { return float64(m.Lifecycle.Skipped) }),
	gauge("strato_meta_dir_cache_bytes", "readers' cache of directory entries and bucket records, about", func(m meta.Metrics) float64 { return float64(m.Memory.DirCache) }),
	gauge("strato_meta_dir_cache_max_bytes", "its bound (strato meta --dir-cache)", func(m meta.Metrics) float64 { return float64(m.Memory.DirCacheMax) }),
	gauge("strato_meta_apply_cache_bytes", "Apply's cache, about, as of the last committed batch", func(m meta.Metrics) float64 { return float64(m.Memory.ApplyCache) }),
	gauge("strato_meta_apply_cache_max_bytes", "its bound (strato meta --apply-cache, plus the snapshot states' 4 MiB)", func(m meta.Metrics) float64 { return float64(m.Memory.ApplyCacheMax) }),
	gauge("strato_meta_block_cache_bytes", "Pebble's block cache", func(m meta.Metrics) float64 { return float64(m.Memory.BlockCache) }),
	gauge("strato_meta_block_cache_max_bytes", "its bound (strato meta --block-cache)", func(m meta.Metrics) float64 { return float64(m.Memory.BlockCacheMax) }),
	gauge("strato_meta_memtable_bytes", "Pebble's memtables", func(m meta.Metrics) float64 { return float64(m.Memory.Memtables) }),
	gauge("strato_meta_memtable_max_bytes", "their bound: three of strato meta --memtable-size (the active one and two waiting to be flushed)", func(m meta.Metrics) float64 { return float64(m.Memory.MemtablesMax) }),
	gauge("strato_meta_raft_log_cache_bytes", "recent Raft log entries kept in memory, about", func(m meta.Metrics) float64 { return float64(m.Memory.RaftLogCache) }),
	gauge("strato_meta_raft_log_cache_max_bytes", "their bound (strato meta --raft-log-cache)", func(m meta.Metrics) float64 { return float64(m.Memory.RaftLogCacheMax) }),
	gauge("strato_meta_deferred_writes", "deferred writes' create tokens the leader handed out and holds (one Raft entry a small key)", func(m meta.Metrics) float64 { return float64(m.DeferredWrites.Pending) }),
	gauge("strato_meta_deferred_writes_bytes", "what they take in memory, about", func(m meta.Metrics) float64 { return float64(m.DeferredWrites.Bytes) }),
	gauge("strato_meta_deferred_writes_max_bytes", "its bound (strato meta --deferred-writes)", func(m meta.Metrics) float64 { return float64(m.DeferredWrites.MaxBytes) }),
	counter("strato_meta_deferred_writes_issued_total", "deferred writes' create tokens handed out", func(m meta.Metrics) float64 { return float64(m.DeferredWrites.Issued) }),
	counter("strato_meta_deferred_writes_committed_total", "deferred writes committed with their token", func(m meta.Metrics) float64 { return float64(m.DeferredWrites.Committed) }),
	counter("strato_meta_deferred_writes_refused_total", "commits refused for a token this leader does not hold (CREATE_TOKEN_UNKNOWN; the client writes again)", func(m meta.Metrics) float64 { return float64(m.DeferredWrites.Refused) }),
	counter("strato_meta_deferred_writes_expired_total", "deferred writes never committed within the TTL", func(m meta.Metrics) float64 { return float64(m.DeferredWrites.Expired) }),
	counter("strato_meta_deferred_writes_discarded_blocks_total", "blocks of expired deferred writes freed", func(m meta.Metrics) float64 { return float64(m.DeferredWrites.Discarded) }),
	gauge("strato_meta_raft_term", "Raft term", func(m meta.Metrics) float64 { return float64(m.Consensus.Term) }),
	gauge("strato_meta_raft_applied_index", "Raft applied index", func(m meta.Metrics) float64 { return float64(m.Consensus.Applied) }),
	gauge("strato_meta_raft_commit_index", "Raft commit index", func(m meta.Metrics) float64 { return float64(m.Consensus.Commit) }),
	gauge("strato_meta_raft_last_index", "last index of the Raft log", func(m meta.Metrics) float64 { return float64(m.Consensus.LastIndex) }),
	gauge("strato_meta_raft_first_index", "first index of the Raft log still held (older entries compacted)", func(m meta.Metrics) float64 { return float64(m.Consensus.FirstIndex) }),
	counter("strato_meta_batches_total", "BatchService calls served: several calls of one client in one gRPC call", func(m meta.Metrics) float64 { return float64(m.Batches) }),
	counter("strato_meta_batched_calls_total", "calls those batches carried", func(m meta.Metrics) float64 { return float64(m.BatchedCalls) }),
	counter("strato_meta_follower_reads_total", "read RPCs this replica served as a follower (clients with follower reads on)", func(m meta.Metrics) float64 { return float64(m.FollowerReads) }),
	gauge("strato_meta_raft_voters", "voters of the Raft group as this replica knows it", func(m meta.Metrics) float64 { return float64(len(m.Consensus.Voters)) }),
}

func rc(name, help string, f func(consensus.Metrics) uint64) metric[consensus.Metrics] {
	return counter(name, help, func(m consensus.Metrics) float64 { return float64(f(m)) })
}

var raftMetrics = []metric[consensus.Metrics]{
	rc("strato_meta_raft_proposals_total", "commands taken into the log by this replica as leader", func(m consensus.Metrics) uint64 { return m.Proposals }),
	rc("strato_meta_raft_log_appends_total", "log writes that appended entries (Proposals/LogAppends is the group-commit factor)", func(m consensus.Metrics) uint64 { return m.LogAppends }),
	rc("strato_meta_raft_entries_appended_total", "entries written to the log", func(m consensus.Metrics) uint64 { return m.EntriesAppended }),
	rc("strato_meta_raft_fsyncs_total", "synced log writes", func(m consensus.Metrics) uint64 { return m.Fsyncs }),
	rc("strato_meta_raft_apply_batches_total", "state-machine batches committed", func(m consensus.Metrics) uint64 { return m.ApplyBatches }),
	rc("strato_meta_raft_entries_applied_total", "entries applied", func(m consensus.Metrics) uint64 { return m.EntriesApplied }),
	rc("strato_meta_raft_compactions_total", "log compactions", func(m consensus.Metrics) uint64 { return m.Compactions }),
	rc("strato_meta_raft_snapshots_sent_total", "snapshots streamed to followers", func(m consensus.Metrics) uint64 { return m.SnapshotsSent }),
	rc("strato_meta_raft_snapshots_applied_total", "snapshots installed from a leader", func(m consensus.Metrics) uint64 { return m.SnapshotsApplied }),
	rc("strato_meta_raft_snapshot_failures_total", "snapshot sends that failed", func(m consensus.Metrics) uint64 { return m.SnapshotFailures }),
	rc("strato_meta_raft_snapshot_received_bytes_total", "keys and values of the snapshots installed from a leader", func(m consensus.Metrics) uint64 { return m.SnapshotBytesReceived }),
	rc("strato_meta_raft_snapshot_received_files_total", "sstables the snapshots installed from a leader were staged in", func(m consensus.Metrics) uint64 { return m.SnapshotFilesReceived }),
	counter("strato_meta_raft_snapshot_install_seconds_total", "time spent receiving and installing snapshots from a leader", func(m consensus.Metrics) float64 { return m.SnapshotInstallTime.Seconds() }),
	rc("strato_meta_raft_messages_sent_total", "Raft messages sent to peers", func(m consensus.Metrics) uint64 { return m.MessagesSent }),
	rc("strato_meta_raft_messages_dropped_total", "Raft messages dropped (peer unreachable or its queue full)", func(m consensus.Metrics) uint64 { return m.MessagesDropped }),
	rc("strato_meta_raft_messages_received_total", "Raft messages received from peers", func(m consensus.Metrics) uint64 { return m.MessagesRecv }),
	rc("strato_meta_raft_read_indexes_total", "linearizable read points confirmed through ReadIndex", func(m consensus.Metrics) uint64 { return m.ReadIndexes }),
	rc("strato_meta_raft_follower_read_indexes_total", "ReadIndex requests this replica sent its leader as a follower (one per batch of follower reads)", func(m consensus.Metrics) uint64 { return m.FollowerReadIndexes }),
	rc("strato_meta_raft_follower_reads_total", "linearizable read points this replica served as a follower", func(m consensus.Metrics) uint64 { return m.FollowerReads }),
	rc("strato_meta_raft_follower_read_failures_total", "follower read points refused (no leader, leader changed, or not granted and applied within the election timeout)", func(m consensus.Metrics) uint64 { return m.FollowerReadFailures }),
	rc("strato_meta_raft_leader_changes_total", "leader changes seen by this replica", func(m consensus.Metrics) uint64 { return m.LeaderChanges }),
}

var blockDeletionMetrics = []metric[meta.BlockDeletionStats]{
	counter("strato_meta_block_deletion_commands_total", "delete-blocks commands queued for datanodes (resends included)", func(s meta.BlockDeletionStats) float64 { return float64(s.Commands) }),
	counter("strato_meta_block_deletion_blocks_total", "block IDs carried by those commands", func(s meta.BlockDeletionStats) float64 { return float64(s.Blocks) }),
	counter("strato_meta_block_deletion_purged_total", "deleted-blocks entries purged once every holder deleted them", func(s meta.BlockDeletionStats) float64 { return float64(s.Purged) }),
	gauge("strato_meta_block_deletion_in_flight", "deleted-blocks entries sent and not yet acknowledged by every holder (the deletion queue)", func(s meta.BlockDeletionStats) float64 { return float64(s.InFlight) }),
}

// namespace is the sizes of the namespace, summed over its buckets.
type namespace struct {
	volumes, buckets, objects, bytes float64
	perVolume                        map[string][2]float64 // bytes, buckets
}

var (
	nsVolumes      = prometheus.NewDesc("strato_meta_volumes", "volumes in the namespace (leader only)", nil, nil)
	nsBuckets      = prometheus.NewDesc("strato_meta_buckets", "buckets in the namespace (leader only)", nil, nil)
	nsObjects      = prometheus.NewDesc("strato_meta_namespace_objects", "committed keys and directories of every bucket (leader only)", nil, nil)
	nsBytes        = prometheus.NewDesc("strato_meta_namespace_bytes", "logical bytes of the committed keys of every bucket (leader only)", nil, nil)
	nsVolumeBytes  = prometheus.NewDesc("strato_meta_volume_used_bytes", "logical bytes of a volume's committed keys (leader only)", []string{"volume"}, nil)
	safeModeDesc   = prometheus.NewDesc("strato_meta_safe_mode", "1 while the leader is in safe mode (no block allocation or replication)", nil, nil)
	scrapeErrsDesc = prometheus.NewDesc("strato_meta_scrape_errors", "1 if the last scrape could not read the namespace sizes", nil, nil)
)

// readNamespace sums the namespace's sizes through the server's own
// handlers (as a client's ListVolumes and ListBuckets would).
func readNamespace(ctx context.Context, srv *meta.Server) (namespace, error) {
	ns := namespace{perVolume: map[string][2]float64{}}
	for after := ""; ; {
		vr, err := srv.ListVolumes(ctx, &stratov1.ListVolumesRequest{StartAfter: after})
		if err != nil {
			return ns, err
		}
		for _, v := range vr.Volumes {
			ns.volumes++
			ns.perVolume[v.Name] = [2]float64{float64(v.UsedBytes), float64(v.UsedNamespace)}
			for bafter := ""; ; {
				br, err := srv.ListBuckets(ctx, &stratov1.ListBucketsRequest{Volume: v.Name, StartAfter: bafter})
				if err != nil {
					return ns, err
				}
				for _, b := range br.Buckets {
					ns.buckets++
					ns.objects += float64(b.UsedNamespace)
					ns.bytes += float64(b.UsedBytes)
					bafter = b.Name
				}
				if !br.Truncated || len(br.Buckets) == 0 {
					break
				}
			}
			after = v.Name
		}
		if !vr.Truncated || len(vr.Volumes) == 0 {
			return ns, nil
		}
	}
}

// RegisterMeta registers a meta replica's metrics with reg: its snapshot
// (strato_meta_*: datanodes, replication, Raft positions and counters,
// block deletion) and, on the leader, the namespace's sizes and safe mode.
func RegisterMeta(reg prometheus.Registerer, srv *meta.Server) {
	reg.MustRegister(collectFunc(func(ch chan<- prometheus.Metric) {
		m := srv.Metrics()
		emit(ch, m, metaMetrics)
		emit(ch, srv.Node().Metrics(), raftMetrics)
		if !m.Leader {
			return
		}
		emit(ch, srv.BlockDeletionStats(), blockDeletionMetrics)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if sm, err := srv.GetSafeMode(ctx, &stratov1.GetSafeModeRequest{}); err == nil {
			ch <- prometheus.MustNewConstMetric(safeModeDesc, prometheus.GaugeValue, b2f(sm.InSafeMode))
		}
		ns, err := readNamespace(ctx, srv)
		ch <- prometheus.MustNewConstMetric(scrapeErrsDesc, prometheus.GaugeValue, b2f(err != nil))
		if err != nil {
			return
		}
		ch <- prometheus.MustNewConstMetric(nsVolumes, prometheus.GaugeValue, ns.volumes)
		ch <- prometheus.MustNewConstMetric(nsBuckets, prometheus.GaugeValue, ns.buckets)
		ch <- prometheus.MustNewConstMetric(nsObjects, prometheus.GaugeValue, ns.objects)
		ch <- prometheus.MustNewConstMetric(nsBytes, prometheus.GaugeValue, ns.bytes)
		for v, s := range ns.perVolume {
			ch <- prometheus.MustNewConstMetric(nsVolumeBytes, prometheus.GaugeValue, s[0], v)
		}
	}))
}

var replicationMetrics = []metric[replication.MetricsSnapshot]{
	counter("strato_datanode_replication_bytes_out_total", "block bytes sent by container pushes", func(m replication.MetricsSnapshot) float64 { return float64(m.BytesOut) }),
	counter("strato_datanode_replication_bytes_in_total", "block bytes received by container imports", func(m replication.MetricsSnapshot) float64 { return float64(m.BytesIn) }),
	gauge("strato_datanode_replication_pushes_in_flight", "container pushes running or waiting for a stream", func(m replication.MetricsSnapshot) float64 { return float64(m.PushesInFlight) }),
	counter("strato_datanode_replication_pushes_completed_total", "container pushes completed", func(m replication.MetricsSnapshot) float64 { return float64(m.PushesCompleted) }),
	counter("strato_datanode_replication_pushes_failed_total", "container pushes failed", func(m replication.MetricsSnapshot) float64 { return float64(m.PushesFailed) }),
	gauge("strato_datanode_replication_imports_in_flight", "container imports running", func(m replication.MetricsSnapshot) float64 { return float64(m.ImportsInFlight) }),
	counter("strato_datanode_replication_imports_completed_total", "container imports completed", func(m replication.MetricsSnapshot) float64 { return float64(m.ImportsCompleted) }),
	counter("strato_datanode_replication_imports_failed_total", "container imports failed or aborted", func(m replication.MetricsSnapshot) float64 { return float64(m.ImportsFailed) }),
	counter("strato_datanode_replication_gave_way_seconds_total", "time background copies (balancer moves) waited for client traffic to pause", func(m replication.MetricsSnapshot) float64 { return m.GaveWay.Seconds() }),
}

var scanMetrics = []metric[scanner.Metrics]{
	counter("strato_datanode_scan_meta_containers_total", "closed containers whose rows the background scanner checked against their files", func(m scanner.Metrics) float64 { return float64(m.MetaScans) }),
	counter("strato_datanode_scan_data_containers_total", "closed containers whose every byte the background scanner read and verified", func(m scanner.Metrics) float64 { return float64(m.DataScans) }),
	counter("strato_datanode_scan_bytes_total", "bytes data scans read and verified against their checksums", func(m scanner.Metrics) float64 { return float64(m.BytesScanned) }),
	counter("strato_datanode_scan_corruptions_total", "containers the scanner found damaged and marked UNHEALTHY", func(m scanner.Metrics) float64 { return float64(m.Corruptions) }),
	gauge("strato_datanode_scan_in_progress", "container scans running (at most one per volume)", func(m scanner.Metrics) float64 { return float64(m.InProgress) }),
	gauge("strato_datanode_scan_last_meta_pass_timestamp_seconds", "when the last full metadata pass ended on every volume (0: none since start)", func(m scanner.Metrics) float64 { return unixSeconds(m.LastMetaPass) }),
	gauge("strato_datanode_scan_last_data_pass_timestamp_seconds", "when the last full data pass ended on every volume (0: none since start)", func(m scanner.Metrics) float64 { return unixSeconds(m.LastDataPass) }),
	gauge("strato_datanode_scan_disabled", "1 if the background scanner is off", func(m scanner.Metrics) float64 { return b2f(m.Disabled) }),
}

func unixSeconds(t time.Time) float64 {
	if t.IsZero() {
		return 0
	}
	return float64(t.UnixMilli()) / 1000
}

var serverMetrics = []metric[datanode.ServerMetrics]{
	gauge("strato_datanode_connections", "data-protocol connections being served", func(m datanode.ServerMetrics) float64 { return float64(m.ConnsOpen) }),
	counter("strato_datanode_connections_accepted_total", "data-protocol connections accepted", func(m datanode.ServerMetrics) float64 { return float64(m.ConnsAccepted) }),
	counter("strato_datanode_received_bytes_total", "chunk bytes received (WRITE_CHUNK and WRITE_COMMIT payloads)", func(m datanode.ServerMetrics) float64 { return float64(m.BytesIn) }),
	counter("strato_datanode_sent_bytes_total", "block bytes sent (READ_CHUNK payloads)", func(m datanode.ServerMetrics) float64 { return float64(m.BytesOut) }),
	counter("strato_datanode_local_reads_total", "READ_LOCAL requests answered with the block's files", func(m datanode.ServerMetrics) float64 { return float64(m.LocalReads) }),
	counter("strato_datanode_local_read_bytes_total", "block bytes handed out as files (READ_LOCAL)", func(m datanode.ServerMetrics) float64 { return float64(m.LocalBytes) }),
	counter("strato_datanode_forwarded_total", "requests a pipeline leader forwarded to its followers", func(m datanode.ServerMetrics) float64 { return float64(m.Forwarded) }),
	counter("strato_datanode_forward_errors_total", "forwarded requests that failed", func(m datanode.ServerMetrics) float64 { return float64(m.ForwardErrors) }),
	counter("strato_datanode_forwarded_sealed_bytes_total", "chunk bytes a pipeline leader sent to its followers as the pass records they arrived in (TLS: sealed once, by the client)", func(m datanode.ServerMetrics) float64 { return float64(m.ForwardedSealed) }),
}

var (
	volCapacity   = prometheus.NewDesc("strato_datanode_volume_capacity_bytes", "size of a data directory's filesystem", []string{"volume"}, nil)
	volAvailable  = prometheus.NewDesc("strato_datanode_volume_available_bytes", "free space of a data directory's filesystem", []string{"volume"}, nil)
	volUsed       = prometheus.NewDesc("strato_datanode_volume_used_bytes", "committed bytes of the containers on a data directory", []string{"volume"}, nil)
	volReserved   = prometheus.NewDesc("strato_datanode_volume_reserved_bytes", "room set aside on a data directory for open containers to grow", []string{"volume"}, nil)
	volWCache     = prometheus.NewDesc("strato_datanode_volume_write_cache_bytes", "bytes of block writes a data directory leaves in the page cache", []string{"volume"}, nil)
	volWCacheMax  = prometheus.NewDesc("strato_datanode_volume_write_cache_max_bytes", "the bound of a data directory's write cache (0: none, the kernel's page cache decides)", []string{"volume"}, nil)
	volWCacheDrop = prometheus.NewDesc("strato_datanode_volume_write_cache_dropped_bytes_total", "bytes of block writes dropped from the page cache to keep the write cache in its bound", []string{"volume"}, nil)
	volContainers = prometheus.NewDesc("strato_datanode_volume_containers", "containers on a data directory, by state (open or other)", []string{"volume", "state"}, nil)
	volFailed     = prometheus.NewDesc("strato_datanode_volume_failed", "1 while a data directory is out of service (FAILED), 0 while healthy", []string{"volume"}, nil)
	volumes       = prometheus.NewDesc("strato_datanode_volumes", "data directories, by health (healthy or failed)", []string{"state"}, nil)
	registered    = prometheus.NewDesc("strato_datanode_registered", "1 while the datanode is registered with meta's leader", nil, nil)
)

// RegisterDatanode registers a datanode's metrics with reg: replication
// counters, the background scanner's, the data server's connections and bytes, per-volume capacity,
// use, containers and health, the volumes by health, and whether it is
// registered. The per-request
// counters and latencies are DataMetrics's (ServerOptions.Observe).
func RegisterDatanode(reg prometheus.Registerer, dn *datanode.Datanode) {
	reg.MustRegister(collectFunc(func(ch chan<- prometheus.Metric) {
		emit(ch, dn.ReplicationMetrics(), replicationMetrics)
		emit(ch, dn.ServerMetrics(), serverMetrics)
		emit(ch, dn.ScanMetrics(), scanMetrics)
		ch <- prometheus.MustNewConstMetric(registered, prometheus.GaugeValue, b2f(dn.Registered()))
		st := dn.Store().Stats()
		ch <- prometheus.MustNewConstMetric(volumes, prometheus.GaugeValue, float64(len(st.Volumes)-st.FailedVolumes), "healthy")
		ch <- prometheus.MustNewConstMetric(volumes, prometheus.GaugeValue, float64(st.FailedVolumes), "failed")
		for _, v := range st.Volumes {
			ch <- prometheus.MustNewConstMetric(volFailed, prometheus.GaugeValue, b2f(v.State == datanode.VolumeFailed), v.Dir)
			ch <- prometheus.MustNewConstMetric(volCapacity, prometheus.GaugeValue, float64(v.Capacity), v.Dir)
			ch <- prometheus.MustNewConstMetric(volAvailable, prometheus.GaugeValue, float64(v.Available), v.Dir)
			ch <- prometheus.MustNewConstMetric(volUsed, prometheus.GaugeValue, float64(v.Used), v.Dir)
			ch <- prometheus.MustNewConstMetric(volReserved, prometheus.GaugeValue, float64(v.Reserved), v.Dir)
			ch <- prometheus.MustNewConstMetric(volWCache, prometheus.GaugeValue, float64(v.WriteCache), v.Dir)
			ch <- prometheus.MustNewConstMetric(volWCacheMax, prometheus.GaugeValue, float64(v.WriteCacheMax), v.Dir)
			ch <- prometheus.MustNewConstMetric(volWCacheDrop, prometheus.CounterValue, float64(v.WriteCacheDropped), v.Dir)
			ch <- prometheus.MustNewConstMetric(volContainers, prometheus.GaugeValue, float64(v.OpenContainers), v.Dir, "open")
			ch <- prometheus.MustNewConstMetric(volContainers, prometheus.GaugeValue, float64(v.Containers-v.OpenContainers), v.Dir, "other")
		}
	}))
}
