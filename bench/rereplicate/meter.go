package rereplicate

import (
	"os"
	"path/filepath"

	"github.com/strato-io/strato/minicluster"
)

// meter reads how far the work after the loss has gone, cheaply enough to
// be read every few milliseconds.
type meter interface {
	// moved is the bytes copied or rebuilt so far: the rate.
	moved() int64
	// activity is what the copy window watches: started grows when the
	// work begins (the first byte a source sends), progress whenever any
	// of it moves (bytes sent or written, a copy or rebuild committed).
	activity() (started, progress int64)
	// perSource is the bytes each datanode has sent so far.
	perSource() map[string]int64
}

// copyMeter reads the survivors' replication counters: what a copy
// (replication THREE) moves. The victim's are left out, so that the
// counts read before it stops and after add up the same datanodes.
type copyMeter struct {
	c      *minicluster.Cluster
	victim int
}

func (m copyMeter) moved() int64 {
	var total int64
	for _, b := range m.perSource() {
		total += b
	}
	return total
}

func (m copyMeter) activity() (started, progress int64) {
	for i := range m.c.DatanodeAddrs() {
		if dn := m.c.Datanode(i); dn != nil && i != m.victim {
			r := dn.ReplicationMetrics()
			started += r.BytesOut
			progress += r.BytesOut + r.ImportsCompleted + r.ImportsFailed
		}
	}
	return started, progress
}

func (m copyMeter) perSource() map[string]int64 {
	per := map[string]int64{}
	for i := range m.c.DatanodeAddrs() {
		if dn := m.c.Datanode(i); dn != nil && i != m.victim {
			per[dn.ID()] += dn.ReplicationMetrics().BytesOut
		}
	}
	return per
}

// rebuildMeter follows the rebuilds of an erasure coded container's lost
// index. A rebuild runs on its target and moves no replication counter:
// it reads the sources with READ_CHUNK (their data servers' bytes sent)
// and writes the index into a container import in the target's volume
// (tmp/import-*), committed as a container the target did not hold. So
// the bytes rebuilt are the files of the imports under way plus the
// committed replicas of the lost containers on datanodes that did not hold
// them; the bytes the sources sent are their servers' counters (nothing
// else reads while the benchmark waits).
type rebuildMeter struct {
	c      *minicluster.Cluster
	victim int
	lost   map[uint64]lostContainer
}

// written returns the bytes of the lost indexes written so far and how
// many of the rebuilt replicas are committed.
func (m rebuildMeter) written() (bytes int64, committed int) {
	for i := range m.c.DatanodeAddrs() {
		dn := m.c.Datanode(i)
		if i == m.victim || dn == nil {
			continue
		}
		// Committed first: an import committed between the two reads is
		// then missed once rather than counted twice.
		for id, l := range m.lost {
			if l.holders[dn.ID()] {
				continue
			}
			if ct, err := dn.Store().Container(id); err == nil {
				bytes += ct.Info().UsedBytes
				committed++
			}
		}
		files, _ := filepath.Glob(filepath.Join(m.c.DatanodeDir(i), "tmp", "import-*", "chunks", "*"))
		for _, f := range files {
			if st, err := os.Stat(f); err == nil {
				bytes += st.Size()
			}
		}
	}
	return bytes, committed
}

func (m rebuildMeter) moved() int64 {
	b, _ := m.written()
	return b
}

func (m rebuildMeter) activity() (started, progress int64) {
	for _, b := range m.perSource() {
		started += b
	}
	w, n := m.written()
	return started, started + w + int64(n)
}

func (m rebuildMeter) perSource() map[string]int64 {
	per := map[string]int64{}
	for i := range m.c.DatanodeAddrs() {
		if dn := m.c.Datanode(i); dn != nil && i != m.victim {
			per[dn.ID()] += dn.ServerMetrics().BytesOut
		}
	}
	return per
}
