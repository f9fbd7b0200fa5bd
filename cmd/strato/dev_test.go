package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/strato-io/strato/internal/pagecache"
)

// TestDevNoWriteCache: `strato dev --no-write-cache` runs its datanodes
// with every replica written around the page cache (decision 0107): after
// a put to a ONE bucket its block files hold no page in the cache; without
// the flag they do (the leader's copy, 0042). Either way the key reads
// back whole.
func TestDevNoWriteCache(t *testing.T) {
	for _, noCache := range []bool{false, true} {
		t.Run(map[bool]string{false: "default", true: "no-write-cache"}[noCache], func(t *testing.T) {
			dir := t.TempDir()
			probe, err := os.OpenFile(filepath.Join(dir, "direct-probe"), os.O_CREATE|os.O_WRONLY|syscall.O_DIRECT, 0o600)
			if err != nil {
				t.Skipf("the test's filesystem has no direct I/O: %v", err)
			}
			require.NoError(t, probe.Close())
			require.NoError(t, os.Remove(probe.Name()))

			args := []string{"--data", filepath.Join(dir, "data")}
			if noCache {
				args = append(args, "--no-write-cache")
			}
			out, _ := runDev(t, args...)
			h := &cliHarness{t: t, addr: devMetaLine.FindStringSubmatch(out)[1]}
			data := payload(8<<20, 3)
			src := filepath.Join(dir, "src.bin")
			require.NoError(t, os.WriteFile(src, data, 0o644))
			h.ok("sh", "volume", "create", "vol")
			h.ok("sh", "bucket", "create", "/vol/bkt", "--replication", "ONE")
			require.Empty(t, h.ok("sh", "key", "put", "/vol/bkt/k", src))

			var blocks, resident int
			require.NoError(t, filepath.WalkDir(filepath.Join(dir, "data"), func(p string, d fs.DirEntry, err error) error {
				if err != nil || d.IsDir() || !strings.HasSuffix(p, ".block") {
					return err
				}
				k, err := pagecache.Resident(p)
				if err != nil {
					return err
				}
				blocks++
				resident += k
				return nil
			}))
			require.NotZero(t, blocks, "no block file under the dev cluster's data")
			if noCache {
				require.Zero(t, resident, "the key's block went through the page cache with --no-write-cache")
			} else {
				require.NotZero(t, resident, "the key's block is not in the page cache by default")
			}

			got := filepath.Join(dir, "got.bin")
			h.ok("sh", "key", "get", "/vol/bkt/k", got)
			back, err := os.ReadFile(got)
			require.NoError(t, err)
			require.Equal(t, data, back)
		})
	}
}
