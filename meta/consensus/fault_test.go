package consensus

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"
	"github.com/stretchr/testify/require"
)

// TestFailedLogSyncStopsTheNode injects an fsync error into the WAL: the
// proposal whose append failed is not acknowledged, the node stops, and
// later proposals fail too instead of being acknowledged undurably.
func TestFailedLogSyncStopsTheNode(t *testing.T) {
	var failSync errorfs.Toggle
	inj := errorfs.InjectorFunc(func(op errorfs.Op) error {
		isSync := op.Kind == errorfs.OpFileSync || op.Kind == errorfs.OpFileSyncData || op.Kind == errorfs.OpFileSyncTo
		if isSync && strings.HasSuffix(op.Path, ".log") {
			return failSync.MaybeError(op)
		}
		return nil
	})
	failSync.Injector = errorfs.ErrInjected
	fs := errorfs.Wrap(vfs.NewMem(), inj)
	n, err := Open(singleOpts(fs, "meta"), &kvSM{})
	require.NoError(t, err)
	defer n.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err = n.Propose(ctx, kvCmd(opPut, "ok", "v"))
	require.NoError(t, err)

	failSync.On()
	_, err = n.Propose(ctx, kvCmd(opPut, "unsynced", "v"))
	require.Error(t, err)
	require.NotErrorIs(t, err, context.DeadlineExceeded)
	_, err = n.Propose(ctx, kvCmd(opPut, "after", "v"))
	require.Error(t, err)
	require.ErrorIs(t, err, ErrClosed)
	require.ErrorIs(t, err, ErrStorage)
	// The entry was applied while its fsync ran; that apply is dropped, not
	// published.
	require.Positive(t, n.Metrics().EntriesAppliedDuringSync)
	_, ok := readKV(t, n.DB(), "unsynced")
	require.False(t, ok, "an entry whose log append failed to sync is not applied")
	_, ok = readKV(t, n.DB(), "ok")
	require.True(t, ok)
	require.ErrorIs(t, n.Close(), ErrStorage)
}
