package scanner

import (
	"sync/atomic"
	"time"
)

// Metrics is a snapshot of a scanner's counters, in the shape of
// Prometheus counters and gauges.
type Metrics struct {
	// MetaScans and DataScans count containers scanned, by kind.
	MetaScans, DataScans int64
	// BytesScanned counts the bytes data scans read and verified.
	BytesScanned int64
	// Corruptions counts the containers found damaged and marked
	// UNHEALTHY.
	Corruptions int64
	// InProgress is a gauge: scans running now (at most one per volume).
	InProgress int64
	// LastMetaPass and LastDataPass are when the last full pass of each
	// kind ended on every volume (the oldest of the volumes'); zero before
	// every volume has finished one.
	LastMetaPass, LastDataPass time.Time
	// Disabled says the scanner is off.
	Disabled bool
}

type metrics struct {
	metaScans, dataScans, bytes, corruptions, inProgress atomic.Int64
	disabled                                             bool
}

func (m *metrics) begin() { m.inProgress.Add(1) }
func (m *metrics) end()   { m.inProgress.Add(-1) }
func (m *metrics) corrupt() {
	m.corruptions.Add(1)
}

// scanned counts a scan done (a data scan's bytes are counted as they are
// read).
func (m *metrics) scanned(data bool) {
	if data {
		m.dataScans.Add(1)
	} else {
		m.metaScans.Add(1)
	}
}

func (m *metrics) snapshot() Metrics {
	return Metrics{MetaScans: m.metaScans.Load(), DataScans: m.dataScans.Load(), BytesScanned: m.bytes.Load(),
		Corruptions: m.corruptions.Load(), InProgress: m.inProgress.Load(), Disabled: m.disabled}
}
