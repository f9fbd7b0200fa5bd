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
	c := startCluster(t)
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

// startCluster starts an in-process cluster with a gateway whose key is
// "bench".
func startCluster(t *testing.T) *minicluster.Cluster {
	c, err := minicluster.Start(t.Context(), minicluster.Options{Dir: t.TempDir(), BlockSize: 4 << 20, ContainerSize: 64 << 20,
		S3: &minicluster.S3Options{Credentials: s3.StaticCredentials{"bench": "bench-secret"}, Gateway: s3.Options{CleanupInterval: -1}}})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, c.Close()) })
	return c
}

// TestListVersions: with Versions, each object is put that many times, and
// LISTVERSIONS lists every version a versioned bucket (Versioning) kept;
// the cleanup of a versioned run deletes every version.
func TestListVersions(t *testing.T) {
	c := startCluster(t)
	cfg := Config{Endpoint: c.S3Endpoint(), AccessKey: "bench", Secret: "bench-secret", Bucket: "bench-ver", Versioning: true,
		Op: "listversions", Size: 10, Concurrency: 2, FillConcurrency: 8, Count: 4, Objects: 700, Versions: 3, Prefix: "v/"}
	var out bytes.Buffer
	res, err := Run(t.Context(), cfg, &out)
	require.NoError(t, err)
	require.Len(t, res.Ops, 1)
	require.Zero(t, res.Ops[0].Errors, res.Ops[0].FirstError)
	require.Equal(t, int64(4), res.Ops[0].Ops)
	require.Equal(t, int64(4*700*3), res.Ops[0].Items, "every version listed, over pages of 1,000")
	require.Contains(t, out.String(), "items=8400 ")

	sc, err := s3.NewClient(s3.ClientOptions{Endpoint: c.S3Endpoint(), AccessKey: "bench", Secret: "bench-secret"})
	require.NoError(t, err)
	left, err := sc.ListObjectVersions(t.Context(), "bench-ver", "v/", "", "", 10)
	require.NoError(t, err)
	require.Empty(t, left.Versions, "cleaned up")
	require.Empty(t, left.DeleteMarkers, "cleaned up")
}
