package telemetry

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/strato-io/strato/meta/consensus"
)

// RaftObservers makes the histograms of a meta replica's consensus node
// and registers them with reg:
//
//	strato_meta_raft_log_sync_seconds       synced log writes (append + fsync)
//	strato_meta_raft_apply_seconds          applies of committed entries
//	strato_meta_raft_proposals_per_append   proposals in each log append (group commit)
//	strato_meta_raft_read_index_seconds     reads' wait for their ReadIndex, leader or follower
//
// Give the result to consensus.Options.Observers (meta.Options.Raft).
func RaftObservers(reg prometheus.Registerer) consensus.Observers {
	sync := prometheus.NewHistogram(prometheus.HistogramOpts{Name: "strato_meta_raft_log_sync_seconds",
		Help: "Time of each synced Raft log write: the batch of new entries and hard state, with its fsync.", Buckets: LatencyBuckets})
	apply := prometheus.NewHistogram(prometheus.HistogramOpts{Name: "strato_meta_raft_apply_seconds",
		Help: "Time of each apply of committed Raft entries to the state machine.", Buckets: LatencyBuckets})
	batch := prometheus.NewHistogram(prometheus.HistogramOpts{Name: "strato_meta_raft_proposals_per_append",
		Help:    "Proposals taken into each Raft log append by the leader (the group-commit factor).",
		Buckets: prometheus.ExponentialBuckets(1, 2, 13)})
	read := prometheus.NewHistogram(prometheus.HistogramOpts{Name: "strato_meta_raft_read_index_seconds",
		Help:    "Time each batch of linearizable reads waited, from its ReadIndex request (on the leader, or forwarded by a follower) until its index was applied here.",
		Buckets: LatencyBuckets})
	reg.MustRegister(sync, apply, batch, read)
	return consensus.Observers{LogSync: sync, Apply: apply, ProposalBatch: batch, ReadIndex: read}
}
