package meta_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/strato-io/strato/meta"
	"github.com/strato-io/strato/minicluster"
	"github.com/strato-io/strato/proto/strato/v1"
)

// smallDisk mounts a tmpfs of size MiB at a new directory (root only).
func smallDisk(t *testing.T, size int) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to mount a small tmpfs")
	}
	dir := t.TempDir()
	out, err := exec.Command("mount", "-t", "tmpfs", "-o", fmt.Sprintf("size=%dm", size), "tmpfs", dir).CombinedOutput()
	require.NoError(t, err, "%s", out)
	t.Cleanup(func() { _ = exec.Command("umount", "-l", dir).Run() })
	return dir
}

// TestDiskReserveRefusesWritesBeforeTheDiskFills fills a small filesystem
// with directories: past the reserve, mutations are refused with
// ResourceExhausted while reads go on and the server stays up; once the
// filesystem grows, writes resume, and every acknowledged directory is
// there after a restart.
func TestDiskReserveRefusesWritesBeforeTheDiskFills(t *testing.T) {
	disk := smallDisk(t, 64)
	c := startMeta(t, minicluster.Options{Dir: disk, ConfigureMeta: func(_ int, o *meta.Options) {
		o.DiskReserve, o.DiskCheckInterval = 40<<20, 10*time.Millisecond
	}})
	s := c.Meta()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	_, err := s.CreateVolume(ctx, &stratov1.CreateVolumeRequest{Name: "vol"})
	require.NoError(t, err)
	_, err = s.CreateBucket(ctx, &stratov1.CreateBucketRequest{Volume: "vol", Name: "bkt"})
	require.NoError(t, err)

	long := strings.Repeat("d", 200)
	var made []string
	var refused error
	for i := 0; i < 200000 && refused == nil; i++ {
		p := fmt.Sprintf("%d/%s%d", i/100, long, i)
		_, err := s.CreateDirectory(ctx, &stratov1.CreateDirectoryRequest{Volume: "vol", Bucket: "bkt", Path: p})
		if status.Code(err) == codes.ResourceExhausted {
			refused = err
			break
		}
		require.NoError(t, err, "after %d directories", len(made))
		made = append(made, p)
	}
	require.Error(t, refused, "the reserve was never reached")
	require.Contains(t, refused.Error(), "under the reserve")
	t.Logf("%d directories made before the refusal: %v", len(made), refused)
	require.NotEmpty(t, made)

	// Reads go on, and the server is up.
	_, err = s.GetFileStatus(ctx, &stratov1.GetFileStatusRequest{Volume: "vol", Bucket: "bkt", Path: made[len(made)-1]})
	require.NoError(t, err)
	select {
	case <-s.Done():
		t.Fatalf("the server stopped: %v", s.Err())
	default:
	}

	// More room: writes resume.
	out, err := exec.Command("mount", "-o", "remount,size=256m", disk).CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.Eventually(t, func() bool {
		_, err := s.CreateDirectory(ctx, &stratov1.CreateDirectoryRequest{Volume: "vol", Bucket: "bkt", Path: "after"})
		return err == nil
	}, 10*time.Second, 20*time.Millisecond)

	// Everything acknowledged survives a restart.
	restartMeta(t, c)
	s = c.Meta()
	for _, p := range append(made, "after") {
		_, err := s.GetFileStatus(ctx, &stratov1.GetFileStatusRequest{Volume: "vol", Bucket: "bkt", Path: p})
		require.NoError(t, err, p)
	}
}
