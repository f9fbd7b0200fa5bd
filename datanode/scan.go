package datanode

import (
	"slices"

	"github.com/strato-io/strato/datanode/container"
	"github.com/strato-io/strato/datanode/scanner"
	"github.com/strato-io/strato/proto/strato/v1"
)

// ClosedContainers returns, per volume in the order of StoreOptions.Dirs,
// the IDs of its CLOSED containers: what the background scanner reads. A
// container being imported is not listed: it joins the store when its
// import ends.
func (s *Store) ClosedContainers() [][]uint64 {
	idx := make(map[*container.Volume]int, len(s.vols))
	for i, v := range s.vols {
		idx[v] = i
	}
	out := make([][]uint64, len(s.vols))
	s.mu.RLock()
	where := make(map[uint64]*container.Volume, len(s.where))
	for id, v := range s.where {
		where[id] = v
	}
	s.mu.RUnlock()
	for id, v := range where {
		c, err := v.Container(id)
		if err != nil || c.State() != container.Closed {
			continue
		}
		out[idx[v]] = append(out[idx[v]], id)
	}
	for _, ids := range out {
		slices.Sort(ids)
	}
	return out
}

// ScanMetrics returns a snapshot of the background scanner's counters.
func (d *Datanode) ScanMetrics() scanner.Metrics { return d.scanner.Metrics() }

// scanStats is the scanner's counters as a heartbeat carries them.
func scanStats(m scanner.Metrics) *stratov1.ScanStats {
	st := &stratov1.ScanStats{MetaScans: m.MetaScans, DataScans: m.DataScans, BytesScanned: m.BytesScanned,
		Corruptions: m.Corruptions, InProgress: int32(m.InProgress), Disabled: m.Disabled}
	if !m.LastMetaPass.IsZero() {
		st.LastMetaPassUnixMs = m.LastMetaPass.UnixMilli()
	}
	if !m.LastDataPass.IsZero() {
		st.LastDataPassUnixMs = m.LastDataPass.UnixMilli()
	}
	return st
}
