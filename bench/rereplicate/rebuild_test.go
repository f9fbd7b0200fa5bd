package rereplicate

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/strato-io/strato/ec"
	"github.com/strato-io/strato/minicluster"
)

// TestRebuildRun runs the benchmark erasure coded, small, end to end: keys
// through an RS-3-2 bucket on six datanodes, one lost, each index it held
// rebuilt on the datanode holding none of its container; the summary has
// the rebuilt bytes (what meta lists, with about d bytes read from the
// sources for each), the rates, the codec's speed, and every key reads
// back.
func TestRebuildRun(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a cluster and waits for a datanode to be declared dead")
	}
	cfg, err := ec.Parse("rs-3-2-64k")
	require.NoError(t, err)
	dir := t.TempDir()
	c, err := minicluster.Start(t.Context(), minicluster.Options{Dir: filepath.Join(dir, "c"), Datanodes: MinDatanodes(cfg),
		ContainerSize: 8 << 20, BlockSize: 2 << 20, DeadAfter: 2 * time.Second})
	require.NoError(t, err)
	defer func() { require.NoError(t, c.Close()) }()
	var out bytes.Buffer
	res, err := Run(t.Context(), Config{EC: cfg, Size: 24 << 20, KeySize: 3 << 20, Threads: 4, SkipBound: true,
		Interval: 100 * time.Millisecond, CodecTime: 20 * time.Millisecond, ChartPath: filepath.Join(dir, "r.png")}, c, &out)
	require.NoError(t, err, out.String())
	t.Log(out.String())
	require.Positive(t, res.Containers)
	require.Positive(t, res.Bytes)
	require.NotEmpty(t, res.PerTarget)
	// A rebuild reads d members once: d bytes per byte rebuilt (a little
	// less where a last stripe is short, a little more for the frames).
	ratio := float64(res.SourceBytes) / float64(res.Bytes)
	require.GreaterOrEqual(t, ratio, float64(cfg.Data)-0.5)
	require.LessOrEqual(t, ratio, float64(cfg.Data)+0.2)
	require.Positive(t, res.MeanGBps)
	require.Positive(t, res.Codec.EncodeGBps)
	require.Positive(t, res.Codec.DecodeGBps)
	s := out.String()
	require.Contains(t, s, "writing 8 keys of 3 MiB (24 MiB, erasure coded rs-3-2-64k)")
	require.Regexp(t, `containers rebuilt: \d+ \(rs-3-2-64k`, s)
	require.Regexp(t, `throughput: mean [0-9.]+ GB/s rebuilt`, s)
	require.Regexp(t, `codec rs-3-2-64k on one core: encode [0-9.]+ GB/s, decode \(one data cell lost\) [0-9.]+ GB/s`, s)
	require.Contains(t, s, "verification: 8 keys")
	_, err = os.Stat(filepath.Join(dir, "r.png"))
	require.NoError(t, err)
}

// TestRebuildRefuses: an erasure coded run refuses the offline generator
// and a cluster without a datanode to rebuild on.
func TestRebuildRefuses(t *testing.T) {
	require.Equal(t, 4, MinDatanodes(ec.Config{}))
	require.Equal(t, 6, MinDatanodes(ec.RS32))
	require.Equal(t, 10, MinDatanodes(ec.RS63))
	require.Equal(t, 4, MinDatanodes(ec.XOR21))
	c, err := minicluster.Start(t.Context(), minicluster.Options{Dir: t.TempDir(), Datanodes: 5})
	require.NoError(t, err)
	defer func() { require.NoError(t, c.Close()) }()
	_, err = Run(t.Context(), Config{EC: ec.RS32, Size: 1 << 20}, c, &bytes.Buffer{})
	require.ErrorContains(t, err, "rs-3-2-1024k needs at least 6 datanodes")
	_, err = Run(t.Context(), Config{EC: ec.RS32, Gen: true, Size: 1 << 20}, c, &bytes.Buffer{})
	require.ErrorContains(t, err, "--gen=false")
}

// TestBoundShape: a rebuild's bound writes the lost datanode's share of
// the (d+p)/d stored (what it holds, when known: one stream per container)
// and reads d times that.
func TestBoundShape(t *testing.T) {
	streams, b, reads := boundShape(Config{Size: 12 << 30, Streams: 10, ContainerSize: 1 << 30}, 4, nil)
	require.Equal(t, []any{30, int64(9 << 30), 1}, []any{streams, b, reads})
	streams, b, reads = boundShape(Config{EC: ec.RS32, Size: 12 << 30, Streams: 10, ContainerSize: 1 << 30}, 6, nil)
	require.Equal(t, []any{50, int64(12<<30) * 5 / 18, 3}, []any{streams, b, reads})
	held := map[uint64]lostContainer{1: {size: 100}, 2: {size: 200}}
	streams, b, reads = boundShape(Config{EC: ec.RS63, Size: 12 << 30, Streams: 10}, 10, held)
	require.Equal(t, []any{2, int64(300), 6}, []any{streams, b, reads})
}
