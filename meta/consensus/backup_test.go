package consensus

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/stretchr/testify/require"
)

// TestCheckpointIndexMatchesState takes checkpoints while proposals are
// applied and checks that each one's state is exactly the result of the
// entries up to its applied index: every put acknowledged at an index at
// or below it is there, none after it is. Then it seeds a new group from
// one and checks the new group starts with that state and goes on.
func TestCheckpointIndexMatchesState(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	n, _ := openSingle(t, vfs.Default, dir)
	defer n.Close()

	var mu sync.Mutex
	indexOf := map[string]uint64{} // key → index of its (only) put
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				key := fmt.Sprintf("w%d-%06d", w, i)
				res, err := n.Propose(ctx, kvCmd(opPut, key, "v"+key))
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				indexOf[key] = res.(uint64)
				mu.Unlock()
			}
		}()
	}
	var cps []*Checkpoint
	for i := range 5 {
		for {
			mu.Lock()
			done := len(indexOf) >= (i+1)*200
			mu.Unlock()
			if done {
				break
			}
		}
		cp, err := n.Checkpoint(filepath.Join(dir, fmt.Sprintf("backup-%d", i)))
		require.NoError(t, err)
		cps = append(cps, cp)
	}
	close(stop)
	wg.Wait()

	for _, cp := range cps {
		info := cp.Info()
		require.Equal(t, []uint64{1}, info.Voters)
		require.NotZero(t, info.GroupID)
		got := map[string]string{}
		require.NoError(t, cp.Pairs(func(k, v []byte) error {
			got[string(k[len("k/"):])] = string(v)
			return nil
		}))
		want := map[string]string{}
		for k, idx := range indexOf {
			if idx <= info.Index {
				want[k] = "v" + k
			}
		}
		require.Equal(t, want, got, "checkpoint at index %d", info.Index)
	}

	// A new group from the last checkpoint.
	last := cps[len(cps)-1]
	info := last.Info()
	seedOpts := singleOpts(vfs.Default, t.TempDir())
	pairs := func(set func(k, v []byte) error) error { return last.Pairs(set) }
	require.NoError(t, Seed(seedOpts, info.Index, info.Term, pairs))
	require.ErrorIs(t, Seed(seedOpts, info.Index, info.Term, pairs), ErrNotEmpty,
		"a directory that holds anything is refused")
	for _, cp := range cps {
		require.NoError(t, cp.Close())
	}

	sm := &kvSM{}
	n2, err := Open(seedOpts, sm)
	require.NoError(t, err)
	defer n2.Close()
	require.Equal(t, []uint64{info.Index}, sm.restoreCalls(), "the state machine is restored at the backup's index")
	waitLeader(t, n2)
	res, err := n2.Propose(ctx, kvCmd(opPut, "after", "x"))
	require.NoError(t, err)
	require.Greater(t, res.(uint64), info.Index, "the new group's log follows the backup's index")
	state := dumpKV(t, n2.DB())
	for k, idx := range indexOf {
		v, ok := state["k/"+k]
		require.Equal(t, idx <= info.Index, ok, "key %s (index %d)", k, idx)
		if ok {
			require.Equal(t, "v"+k, v)
		}
	}
	require.Equal(t, "x", state["k/after"])
}
