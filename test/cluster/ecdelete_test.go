package cluster

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/strato-io/strato/ec"
)

// TestErasureCodedDeleteFreesSpace: deleting an erasure coded key gives
// its space back on every member of every block group, data and parity
// alike (committed bytes and block files), and empties meta's
// deleted-blocks table; what the members held adds up to the groups'
// member lengths (d+p of them for each group).
func TestErasureCodedDeleteFreesSpace(t *testing.T) {
	const n = 5
	c, cl := ecCluster(t, n, "rs-3-2-1024k")
	ctx := t.Context()
	cfg, err := ec.Parse("rs-3-2-1024k")
	require.NoError(t, err)
	data := fastRandom(30<<20+12345, 7) // three block groups of 12 MiB, the last short
	require.NoError(t, putKey(ctx, cl, "big", data, 5))
	ki, err := cl.LookupKey(ctx, "vol", "ecdata", "big")
	require.NoError(t, err)
	require.Len(t, ki.Blocks, 3)
	var want int64
	for _, bl := range ki.Blocks {
		for m := range cfg.Members() {
			want += cfg.MemberLen(bl.Length, m)
		}
	}
	held := func() (used int64, files int) {
		for i := range n {
			used += c.Datanode(i).Store().Stats().Used
			f, err := filepath.Glob(filepath.Join(c.DatanodeDir(i), "containers", "*", "chunks", "*"))
			require.NoError(t, err)
			files += len(f)
		}
		return used, files
	}
	used, files := held()
	require.Equal(t, want, used, "the members hold the groups' bytes")
	require.Equal(t, 3*cfg.Members(), files, "one block file per member per group")

	require.NoError(t, cl.DeleteKey(ctx, "vol", "ecdata", "big"))
	require.Eventually(t, func() bool {
		advance(c)
		used, files := held()
		entries, _, err := c.Meta().DeletedBlocksBacklog(ctx)
		return err == nil && used == 0 && files == 0 && entries == 0
	}, 30*time.Second, 10*time.Millisecond, "space back on every member")
}
