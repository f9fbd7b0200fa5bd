package rereplicate

import (
	"image/png"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestWriteChart(t *testing.T) {
	p := filepath.Join(t.TempDir(), "c.png")
	require.NoError(t, WriteChart(p, "re-replication throughput (GB/s) over time", []float64{0, 0, 0.5, 1.2, 1.1, 0.3, 0}, time.Second, 1.5, "bound"))
	f, err := os.Open(p)
	require.NoError(t, err)
	defer f.Close()
	img, err := png.Decode(f)
	require.NoError(t, err)
	require.Equal(t, 800, img.Bounds().Dx())
	require.NoError(t, WriteChart(filepath.Join(t.TempDir(), "empty.png"), "empty", nil, time.Second, 0, ""))
}
