package consensus

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"syscall"
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

// TestFullDiskStopsTheNodeAndLosesNothing fills the disk (every write
// fails with ENOSPC) under 8 proposers: nothing written after that is
// acknowledged, the node stops with ErrStorage instead of crashing the
// process, and once space is back a restart finds every acknowledged write
// and takes new ones.
func TestFullDiskStopsTheNodeAndLosesNothing(t *testing.T) {
	var full errorfs.Toggle
	full.Injector = errorfs.InjectorFunc(func(op errorfs.Op) error { return fmt.Errorf("%s: %w", op.Path, syscall.ENOSPC) })
	inj := errorfs.InjectorFunc(func(op errorfs.Op) error {
		switch op.Kind {
		case errorfs.OpFileWrite, errorfs.OpFileWriteAt, errorfs.OpCreate, errorfs.OpFilePreallocate:
			return full.MaybeError(op)
		}
		return nil
	})
	mem := vfs.NewMem()
	n, err := Open(singleOpts(errorfs.Wrap(mem, inj), "meta"), &kvSM{})
	require.NoError(t, err)

	var (
		mu    sync.Mutex
		acked = map[string]bool{}
		wg    sync.WaitGroup
		errs  = make(chan error, 8)
	)
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				k := fmt.Sprintf("w%d/%d", w, i)
				_, err := n.Propose(ctx, kvCmd(opPut, k, "v"))
				cancel()
				if err != nil {
					errs <- err
					return
				}
				mu.Lock()
				acked[k] = true
				mu.Unlock()
			}
		}()
	}
	time.Sleep(100 * time.Millisecond)
	full.On()
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NotErrorIs(t, err, context.DeadlineExceeded, "a full disk fails proposals, it does not hang them")
	}
	require.ErrorIs(t, n.Err(), ErrStorage)
	require.ErrorIs(t, n.Close(), ErrStorage)
	require.NotEmpty(t, acked)

	full.Off()
	n, err = Open(singleOpts(errorfs.Wrap(mem, inj), "meta"), &kvSM{})
	require.NoError(t, err)
	defer n.Close()
	for k := range acked {
		_, ok := readKV(t, n.DB(), k)
		require.True(t, ok, "acknowledged %s lost to the full disk", k)
	}
	_, err = n.Propose(context.Background(), kvCmd(opPut, "after", "v"))
	require.NoError(t, err)
	t.Logf("%d writes acknowledged before the disk filled, all found after the restart", len(acked))
}
