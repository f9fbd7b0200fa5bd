package cluster

import (
	"encoding/binary"
	"fmt"

	"github.com/cockroachdb/pebble/v2"
)

// A state restored from a backup is behind the cluster it came from: that
// cluster may have created containers and handed out block IDs after the
// backup, and its datanodes may hold them. The restored state's ID counters
// are advanced by these gaps so that it never hands out those IDs again (a
// new block must never take the ID of a block a datanode already holds).
const (
	// RestoreContainerGap is how far a restore advances the next container ID.
	RestoreContainerGap = 1 << 24
	// RestoreLocalIDGap is how far a restore advances the next block local ID.
	RestoreLocalIDGap = 1 << 40
)

// IDCounterKeys are the keys of the ID counters a restore advances (see
// RestoredIDCounter).
func IDCounterKeys() [][]byte {
	return [][]byte{counterKey(tagNextContainer), counterKey(tagNextLocalID)}
}

// RestoredIDCounter returns the value an ID counter (a key of
// IDCounterKeys) takes in a restored state whose backup holds v (nil: the
// backup has none, the counter was at its start). ok is false for a key
// that is not an ID counter.
func RestoredIDCounter(k, v []byte) (nv []byte, ok bool, err error) {
	if len(k) != 2 || k[0] != keyPrefix || (k[1] != tagNextContainer && k[1] != tagNextLocalID) {
		return nil, false, nil
	}
	next := uint64(1)
	if v != nil {
		if len(v) != 8 {
			return nil, true, fmt.Errorf("%w: counter %q has %d bytes", ErrCorrupt, k[1], len(v))
		}
		next = binary.BigEndian.Uint64(v)
	}
	gap := uint64(RestoreContainerGap)
	if k[1] == tagNextLocalID {
		gap = RestoreLocalIDGap
	}
	if next+gap < next {
		return nil, true, fmt.Errorf("%w: counter %q at %d cannot be advanced by %d", ErrCorrupt, k[1], next, gap)
	}
	return binary.BigEndian.AppendUint64(nil, next+gap), true, nil
}

// StoredClusterID reads the cluster ID of a DB holding the cluster state
// (e.g. a backup's checkpoint): "" when none was set yet.
func StoredClusterID(r pebble.Reader) (string, error) {
	return getString(r, counterKey(tagClusterID))
}
