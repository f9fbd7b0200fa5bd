package minicluster

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/strato-io/strato/client"
)

// RS-6-3 on nine datanodes: keys of every shape (empty, shorter than a
// cell, a cell and a byte, a stripe and a byte, several block groups) read
// back whole and in ranges across cells, stripes and groups; then again
// with three datanodes stopped (p members of every group lost: degraded
// reads), and a clear error, never wrong bytes, with a fourth.
func TestErasureCodedRS63(t *testing.T) {
	c, cl := ecCluster(t, 9, "rs-6-3-1024k")
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	const mib = 1 << 20
	rng := rand.New(rand.NewPCG(6, 3))
	// Blocks of 4 MiB: a group holds 4 stripes of 6 MiB, 24 MiB.
	sizes := map[string]int{"empty": 0, "small": 100, "cell+1": mib + 1, "stripe+1": 6*mib + 1, "groups": 60*mib + 4321}
	data := map[string][]byte{}
	for k, n := range sizes {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		data[k] = b
		require.NoError(t, putKey(ctx, cl, k, b, 5), k)
	}
	ki, err := cl.LookupKey(ctx, "vol", "ecdata", "groups")
	require.NoError(t, err)
	require.Len(t, ki.Blocks, 3, "60 MiB in groups of 24 MiB")
	for _, bl := range ki.Blocks {
		ids := map[string]bool{}
		for _, m := range bl.GetPipeline().GetMembers() {
			ids[m.Id] = true
		}
		require.Len(t, ids, 9, "a group's members are distinct datanodes")
	}
	check := func(what string) {
		t.Helper()
		for k, want := range data {
			got, err := getKey(ctx, cl, k)
			require.NoError(t, err, "%s: %s", what, k)
			require.True(t, bytes.Equal(want, got), "%s: %s differs", what, k)
		}
		r, err := cl.OpenKey(ctx, "vol", "ecdata", "groups")
		require.NoError(t, err)
		defer func() { _ = r.Close() }()
		for _, rg := range [][2]int{{0, 10}, {mib - 5, 10}, {6*mib - 1, 2}, {24*mib - 7, 20}, {5*mib + 3, 30 * mib}, {60*mib + 4000, 321}} {
			buf := make([]byte, rg[1])
			_, err := r.ReadAt(buf, int64(rg[0]))
			require.NoError(t, err, "%s: range %v", what, rg)
			require.True(t, bytes.Equal(data["groups"][rg[0]:rg[0]+rg[1]], buf), "%s: range %v differs", what, rg)
		}
	}
	check("healthy")
	for _, i := range []int{0, 4, 8} {
		require.NoError(t, c.StopDatanode(i))
	}
	check("three members down")
	require.NoError(t, c.StopDatanode(2))
	_, err = getKey(context.Background(), cl, "groups")
	require.Error(t, err, "four members of nine down")
	require.True(t, errors.Is(err, client.ErrCorruptRead), "%v", err)
}
