package test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/strato-io/strato/client"
	"github.com/strato-io/strato/meta/backup"
	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

// TestMetaBackupRestore: three meta replicas and three datanodes as
// processes, under a write load. `strato admin meta backup` copies a
// follower while the writes go on. A key written before the backup is
// deleted after it. The whole cluster stops; three new meta directories
// are restored from the backup (`strato meta --restore`) at the same
// addresses and the same datanodes start again against them: they
// register (same cluster ID), every key acknowledged before the backup
// reads back identical, the key deleted after the backup is back with its
// bytes (its blocks waited out --block-deletion-delay), no key reads back
// different bytes, and new keys are written.
func TestMetaBackupRestore(t *testing.T) {
	root := t.TempDir()
	addrs := []string{freeAddr(t), freeAddr(t), freeAddr(t)}
	metaList := strings.Join(addrs, ",")
	metas := startMetaGroup(t, root, "meta", addrs)
	dns := startDatanodes(t, root, metaList, 3)
	all := append(append([]*proc{}, metas...), dns...)
	waitReady(t, metaList, all...)

	ctx := t.Context()
	cl, err := client.New(client.Options{Meta: addrs, AttemptTimeout: 5 * time.Second, Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	defer cl.Close()
	const vol, bkt = "backupv", "backupb"
	_, err = cl.CreateVolume(ctx, &stratov1.CreateVolumeRequest{Name: vol})
	require.NoError(t, err)
	_, err = cl.CreateBucket(ctx, &stratov1.CreateBucketRequest{Volume: vol, Name: bkt, Layout: stratov1.BucketLayout_LAYOUT_OBS})
	require.NoError(t, err)
	content := func(name string) []byte {
		return []byte(strings.Repeat(name+";", 40+len(name)%7))
	}
	put := func(ctx context.Context, name string) error {
		w, err := cl.CreateKey(ctx, vol, bkt, name, client.WriteOptions{})
		if err != nil {
			return err
		}
		if _, err := w.Write(content(name)); err != nil {
			_ = w.Close()
			return err
		}
		return w.Close()
	}
	require.NoError(t, put(ctx, "victim"))

	// The write load: acknowledged keys, in order.
	var mu sync.Mutex
	var acked []string
	wctx, stopWrites := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for w := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; wctx.Err() == nil; i++ {
				name := fmt.Sprintf("w%d/k%05d", w, i)
				if put(wctx, name) == nil {
					mu.Lock()
					acked = append(acked, name)
					mu.Unlock()
				}
			}
		}()
	}
	waitAcked := func(n int) {
		require.Eventually(t, func() bool { mu.Lock(); defer mu.Unlock(); return len(acked) >= n }, time.Minute, 10*time.Millisecond)
	}
	waitAcked(60)

	// Every key acknowledged so far is committed at or below the leader's
	// commit index; once a follower has applied that far, its backup
	// holds them all.
	mu.Lock()
	before := slices.Clone(acked)
	mu.Unlock()
	leader, commit := metaLeaderCommit(t, addrs)
	follower := (leader + 1) % 3
	require.Eventually(t, func() bool { return metaStatusOf(t, addrs[follower]).GetApplied() >= commit },
		30*time.Second, 10*time.Millisecond)
	bdir := filepath.Join(root, "backup")
	out, err := cli(addrs[follower], "admin", "meta", "backup", bdir)
	require.NoError(t, err, out)
	t.Logf("backup of replica %d: %s", follower+1, out)
	r, err := backup.Open(vfs.Default, bdir)
	require.NoError(t, err)
	require.NoError(t, r.Pairs(func(k, v []byte) error { return nil }), "the state file matches its manifest")
	m := r.Manifest()
	require.GreaterOrEqual(t, m.AppliedIndex, commit)
	require.Equal(t, uint64(follower+1), m.ReplicaID)
	require.Len(t, m.Members, 3)
	require.NotEmpty(t, m.ClusterID)

	// Writes go on after the backup; the victim is deleted.
	waitAcked(len(before) + 30)
	require.NoError(t, cl.DeleteKey(ctx, vol, bkt, "victim"))
	// Long enough for meta to free the blocks without the deletion delay
	// (its tick is 1s, the datanodes heartbeat every 200ms): checked, the
	// victim then fails to read after the restore (BLOCK_NOT_FOUND).
	time.Sleep(6 * time.Second)
	stopWrites()
	wg.Wait()
	for _, p := range all {
		p.stop()
	}

	// A new meta group from the backup, the same datanodes.
	metas = startMetaGroup(t, root, "restored", addrs, "--restore", bdir)
	for _, p := range dns {
		p.start()
	}
	all = append(append([]*proc{}, metas...), dns...)
	waitReady(t, metaList, all...)

	read := func(name string) ([]byte, error) {
		rd, err := cl.OpenKey(ctx, vol, bkt, name)
		if err != nil {
			return nil, err
		}
		defer rd.Close()
		return io.ReadAll(rd)
	}
	for _, name := range append(before, "victim") {
		got, err := read(name)
		require.NoError(t, err, "key %s was acknowledged before the backup", name)
		require.Equal(t, content(name), got, "key %s", name)
	}
	// Keys written after the backup may be lost, never garbage.
	mu.Lock()
	later := acked[len(before):]
	mu.Unlock()
	var kept int
	for _, name := range later {
		if got, err := read(name); err == nil {
			kept++
			require.Equal(t, content(name), got, "key %s", name)
		}
	}
	t.Logf("%d keys acknowledged before the backup read back; of %d acknowledged after it, %d are in the backup", len(before), len(later), kept)
	// A directory that holds anything is not restored into.
	out, err = run("meta", "--auth", "none", "--data", filepath.Join(root, "restored1"), "--listen", freeAddr(t), "--restore", bdir)
	require.Error(t, err, out)
	require.Contains(t, out, "not empty")
	// The restored cluster takes new writes (its IDs do not collide with
	// what the old one wrote after the backup).
	for i := range 5 {
		name := fmt.Sprintf("after/k%d", i)
		require.NoError(t, put(ctx, name))
		got, err := read(name)
		require.NoError(t, err)
		require.Equal(t, content(name), got)
	}
}

// startMetaGroup starts a group of meta replicas, one at each of addrs,
// on root/<name>1, root/<name>2, ...
func startMetaGroup(t *testing.T, root, name string, addrs []string, flags ...string) []*proc {
	var peers []string
	for i, a := range addrs {
		peers = append(peers, fmt.Sprintf("%d=%s", i+1, a))
	}
	metas := make([]*proc, len(addrs))
	for i, a := range addrs {
		metas[i] = startMeta(t, filepath.Join(root, fmt.Sprint(name, i+1)), a, append([]string{
			"--id", fmt.Sprint(i + 1), "--peers", strings.Join(peers, ","), "--stale-after", "2s"}, flags...)...)
	}
	return metas
}

// metaStatusOf asks the replica at addr for its status.
func metaStatusOf(t *testing.T, addr string) *stratov1.MetaStatusResponse {
	t.Helper()
	cc, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(t, err)
	defer cc.Close()
	st, err := stratov1.NewAdminServiceClient(cc).MetaStatus(t.Context(), &stratov1.MetaStatusRequest{})
	require.NoError(t, err)
	return st
}

// metaLeaderCommit returns the index in addrs of the leader and its commit index.
func metaLeaderCommit(t *testing.T, addrs []string) (int, uint64) {
	t.Helper()
	for range 100 {
		for i, a := range addrs {
			if st := metaStatusOf(t, a); st.GetRole() == "leader" {
				return i, st.GetCommit()
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatal("no meta leader")
	return 0, 0
}
