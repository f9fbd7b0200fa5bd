package s3load

import (
	"bytes"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/strato-io/strato/minicluster"
	"github.com/strato-io/strato/s3"
)

// TestRun drives every operation, briefly, against a gateway on a real
// in-process cluster, and checks the report and what is left behind.
func TestRun(t *testing.T) {
	c, err := minicluster.Start(t.Context(), minicluster.Options{Dir: t.TempDir(), BlockSize: 4 << 20, ContainerSize: 64 << 20,
		S3: &minicluster.S3Options{Credentials: s3.StaticCredentials{"bench": "bench-secret"}, Gateway: s3.Options{CleanupInterval: -1}}})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, c.Close()) })
	cl, err := c.Client()
	require.NoError(t, err)
	defer cl.Close()

	for _, op := range []string{"put", "get", "head", "list", "delete", "mixed"} {
		var out bytes.Buffer
		cfg := Config{Endpoint: c.S3Endpoint(), AccessKey: "bench", Secret: "bench-secret", Op: op, Size: 100 << 10,
			Concurrency: 3, Count: 20, Objects: 10, Prefix: op + "/", ServerPID: os.Getpid()}
		if op == "mixed" {
			cfg.Count, cfg.Duration = 0, 300*time.Millisecond
		}
		res, err := Run(t.Context(), cfg, &out)
		require.NoError(t, err, op)
		var ops int64
		for _, o := range res.Ops {
			require.Zero(t, o.Errors, "%s %s: %s", op, o.Op, o.FirstError)
			ops += o.Ops
		}
		switch op {
		case "delete":
			require.Equal(t, int64(10), ops, "each prepared object deleted once")
		case "mixed":
			require.Len(t, res.Ops, 4)
			require.Positive(t, ops)
		default:
			require.Equal(t, int64(20), ops, op)
		}
		if op == "put" || op == "get" {
			require.Equal(t, int64(20*100<<10), res.Bytes(), op)
		}
		require.Contains(t, out.String(), "summary op="+strings.ToUpper(res.Ops[0].Op))
		require.Contains(t, out.String(), "server pid")
		// Cleaned up: nothing left under the prefix.
		sc, err := s3.NewClient(s3.ClientOptions{Endpoint: c.S3Endpoint(), AccessKey: "bench", Secret: "bench-secret"})
		require.NoError(t, err)
		left, _, err := sc.ListObjects(t.Context(), "bench-s3", op+"/", "", 10)
		require.NoError(t, err)
		require.Empty(t, left, op)
	}
}
