package s3

import (
	"encoding/base64"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestCombineCRCs: the CRC combined from pieces' CRCs and lengths is the
// CRC of the whole, for each CRC S3 combines, whatever the cuts (empty
// pieces too).
func TestCombineCRCs(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	data := make([]byte, 3<<20)
	for i := range data {
		data[i] = byte(r.Uint32())
	}
	for _, algo := range []string{"crc32", "crc32c", "crc64nvme"} {
		for range 20 {
			var crcs [][]byte
			var sizes []int64
			for off := 0; off < len(data); {
				n := min(r.IntN(1<<20), len(data)-off)
				h := newChecksum(algo)
				h.Write(data[off : off+n])
				crcs, sizes = append(crcs, h.Sum(nil)), append(sizes, int64(n))
				off += n
			}
			whole := newChecksum(algo)
			whole.Write(data)
			got, ok := combineCRCs(algo, crcs, sizes)
			require.True(t, ok)
			require.Equal(t, base64.StdEncoding.EncodeToString(whole.Sum(nil)), base64.StdEncoding.EncodeToString(got), "%s over %d pieces", algo, len(crcs))
		}
	}
	_, ok := combineCRCs("sha256", nil, nil)
	require.False(t, ok)
}
