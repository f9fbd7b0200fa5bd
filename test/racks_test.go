package test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/strato-io/strato/client"
	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

// TestRackLoss: a meta and nine datanodes as processes, three racks of
// three. The first rack starts alone and takes THREE keys, so their
// containers are all on one rack (an older placement); when the other
// racks join, meta mends them. Writers then put THREE and rs-3-2 keys
// while every datanode of the third rack is killed with SIGKILL. Every
// acknowledged key reads back identical, and meta restores every
// container's redundancy within the rack rules on the two racks left:
// a THREE container on both, an rs-3-2 one on both with at most three
// members in one (checked from `strato admin container info --json`).
func TestRackLoss(t *testing.T) {
	root := t.TempDir()
	metaAddr := freeAddr(t)
	metas := []*proc{startMeta(t, filepath.Join(root, "meta"), metaAddr, "--stale-after", "2s", "--dead-after", "5s")}
	var dns []*proc
	rackOf := map[string]string{} // datanode ID → rack
	startRack := func(r int) {
		for i := range 3 {
			dir := filepath.Join(root, fmt.Sprintf("dn%d-%d", r, i))
			dns = append(dns, startDatanode(t, dir, metaAddr, "--heartbeat-interval", "200ms", "--rack", fmt.Sprintf("/rack%d", r)))
		}
	}
	startRack(1)
	waitReady(t, metaAddr, append(metas, dns...)...)
	cl, err := client.New(client.Options{Meta: []string{metaAddr}, AttemptTimeout: 5 * time.Second, Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	defer cl.Close()
	for _, args := range [][]string{{"sh", "volume", "create", "vol"}, {"sh", "bucket", "create", "/vol/three", "--replication", "THREE"},
		{"sh", "bucket", "create", "/vol/rs32", "--replication", "rs-3-2-1024k"}} {
		out, err := cli(metaAddr, args...)
		require.NoError(t, err, "%v: %s", args, out)
	}

	// On one rack: THREE keys, their containers closed.
	keys := &rackKeys{data: map[string][]byte{}}
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 6 {
		require.NoError(t, keys.put(t.Context(), cl, rng, "three", fmt.Sprintf("old%d", i)))
	}
	oneRack := containerIDs(t, cl)
	require.NotEmpty(t, oneRack)
	for _, id := range oneRack {
		out, err := cli(metaAddr, "admin", "container", "close", fmt.Sprint(id))
		require.NoError(t, err, out)
	}

	// Two more racks: the old containers are mended.
	startRack(2)
	startRack(3)
	for _, p := range dns {
		rackOf[datanodeID(t, p)] = rackFlag(p)
	}
	require.Eventually(t, func() bool { return healthyDatanodes(t, cl) == 9 }, time.Minute, 200*time.Millisecond)
	waitPlaced(t, metaAddr, rackOf, oneRack, nil, "the one-rack containers are mended")

	// Writers over the three racks, and the third rack lost mid-way.
	ctx, stop := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	for w, bucket := range []string{"three", "rs32"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 7))
			for i := 0; ctx.Err() == nil; i++ {
				_ = keys.put(ctx, cl, rng, bucket, fmt.Sprintf("w%d-%d", w, i)) // an error: not acknowledged
				time.Sleep(20 * time.Millisecond)
			}
		}()
	}
	require.Eventually(t, func() bool { return keys.count() >= 20 }, time.Minute, 100*time.Millisecond)
	all := containerIDs(t, cl)
	waitPlaced(t, metaAddr, rackOf, all, nil, "containers placed over the racks")
	var lost []*proc
	for _, p := range dns {
		if rackFlag(p) == "/rack3" {
			lost = append(lost, p)
		}
	}
	killAll(lost...)
	before := keys.count()
	require.Eventually(t, func() bool { return keys.count() >= before+10 }, time.Minute, 100*time.Millisecond, "writes go on after the rack's loss")
	stop()
	wg.Wait()
	t.Logf("%d keys acknowledged (%d before the rack was lost)", keys.count(), before)
	keys.check(t, cl)

	// Full redundancy within the rules on the two racks left.
	dead := map[string]bool{}
	for _, p := range lost {
		dead[datanodeID(t, p)] = true
	}
	waitPlaced(t, metaAddr, rackOf, containerIDs(t, cl), dead, "redundancy restored on the racks left")
	keys.check(t, cl)
}

// rackKeys are the keys acknowledged, with their bytes.
type rackKeys struct {
	mu   sync.Mutex
	data map[string][]byte // bucket/key → bytes
}

func (k *rackKeys) put(ctx context.Context, cl *client.Client, rng *rand.Rand, bucket, name string) error {
	data := make([]byte, 1+rng.IntN(3<<20))
	for i := range data {
		data[i] = byte(rng.Uint32())
	}
	w, err := cl.CreateKey(ctx, "vol", bucket, name, client.WriteOptions{})
	if err != nil {
		return err
	}
	if _, err := w.Write(data); err != nil {
		_ = w.Close()
		return err
	}
	if err := w.Close(); err != nil {
		return err
	}
	k.mu.Lock()
	k.data[bucket+"/"+name] = data
	k.mu.Unlock()
	return nil
}

func (k *rackKeys) count() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return len(k.data)
}

// check reads every acknowledged key back.
func (k *rackKeys) check(t *testing.T, cl *client.Client) {
	t.Helper()
	k.mu.Lock()
	defer k.mu.Unlock()
	for name, want := range k.data {
		bucket, key, _ := strings.Cut(name, "/")
		r, err := cl.OpenKey(t.Context(), "vol", bucket, key)
		require.NoError(t, err, name)
		got, err := io.ReadAll(r)
		_ = r.Close()
		require.NoError(t, err, name)
		require.True(t, bytes.Equal(want, got), "%s reads back different bytes", name)
	}
}

// containerIDs lists every container meta knows.
func containerIDs(t *testing.T, cl *client.Client) []uint64 {
	resp, err := client.Cluster(t.Context(), cl, func(ctx context.Context, a client.ClusterStubs) (*stratov1.ListContainersResponse, error) {
		return a.ListContainers(ctx, &stratov1.ListContainersRequest{Limit: 10000})
	})
	require.NoError(t, err)
	var ids []uint64
	for _, c := range resp.GetContainers() {
		ids = append(ids, c.GetId())
	}
	return ids
}

func healthyDatanodes(t *testing.T, cl *client.Client) int {
	resp, err := client.Cluster(t.Context(), cl, func(ctx context.Context, a client.ClusterStubs) (*stratov1.ListDatanodesResponse, error) {
		return a.ListDatanodes(ctx, &stratov1.ListDatanodesRequest{})
	})
	if err != nil {
		return 0
	}
	n := 0
	for _, d := range resp.GetDatanodes() {
		if d.GetHealth() == stratov1.NodeHealth_NODE_HEALTHY {
			n++
		}
	}
	return n
}

// waitPlaced waits until each container of ids (`strato admin container
// info ID --json`) has its full redundancy on datanodes not in dead and
// spreads over their racks as the rules want: a replicated one over two
// racks at least, an erasure coded one over every rack left (up to its
// members) with at most ceil(members/racks) in one. Open containers are
// judged by the replicas they have.
func waitPlaced(t *testing.T, metaAddr string, rackOf map[string]string, ids []uint64, dead map[string]bool, what string) {
	t.Helper()
	racks := map[string]bool{}
	for id, r := range rackOf {
		if !dead[id] {
			racks[r] = true
		}
	}
	var last string
	deadline := time.Now().Add(2 * time.Minute)
	for _, id := range ids {
		for {
			last = placement(metaAddr, rackOf, id, dead, len(racks))
			if last == "" {
				break
			}
			if time.Now().After(deadline) {
				out, _ := cli(metaAddr, "admin", "container", "list")
				t.Fatalf("%s: container %d: %s\n%s", what, id, last, out)
			}
			time.Sleep(250 * time.Millisecond)
		}
	}
}

// placement says what is wrong with container id's placement ("": nothing).
func placement(metaAddr string, rackOf map[string]string, id uint64, dead map[string]bool, racks int) string {
	out, err := cli(metaAddr, "admin", "container", "info", fmt.Sprint(id), "--json")
	if err != nil {
		return err.Error() + ": " + out
	}
	var info struct {
		Container struct {
			State         string
			Replication   string
			ErasureCoding *struct{ Data, Parity int }
			Problem       string
		}
		Replicas map[string]struct {
			State        string
			ReplicaIndex int
		}
	}
	if err := json.Unmarshal([]byte(out), &info); err != nil {
		return err.Error() + ": " + out
	}
	c := info.Container
	if c.State == "DELETED" {
		return ""
	}
	if c.Problem != "" && c.Problem != "UNSPECIFIED" {
		return c.Problem
	}
	want, perRack := 3, 3
	if c.Replication == "ONE" {
		want = 1
	}
	if e := c.ErasureCoding; e != nil {
		want = e.Data + e.Parity
		perRack = (want + racks - 1) / racks
	}
	count := map[string]int{}
	good := 0
	for dn, r := range info.Replicas {
		if dead[dn] || r.State == "UNHEALTHY" {
			continue
		}
		good++
		count[rackOf[dn]]++
	}
	if c.State == "CLOSED" && good < want {
		return fmt.Sprintf("%d good replicas of %d", good, want)
	}
	for r, n := range count {
		if n > perRack {
			return fmt.Sprintf("%d replicas on %s: %s", n, r, out)
		}
	}
	minRacks := min(2, racks, good) // replicated: two racks
	if c.ErasureCoding != nil {
		minRacks = min(want, racks, good)
	}
	if len(count) < minRacks {
		return fmt.Sprintf("replicas on %d racks: %s", len(count), out)
	}
	return ""
}

// datanodeID is the ID a datanode process keeps in its data directory.
func datanodeID(t *testing.T, p *proc) string {
	t.Helper()
	var id string
	require.Eventually(t, func() bool {
		b, err := os.ReadFile(filepath.Join(flagOf(p, "--data"), "datanode.id"))
		id = strings.TrimSpace(string(b))
		return err == nil && id != ""
	}, 30*time.Second, 100*time.Millisecond)
	return id
}

// rackFlag is the --rack a datanode process was started with.
func rackFlag(p *proc) string { return flagOf(p, "--rack") }

func flagOf(p *proc, name string) string {
	for i, a := range p.Args {
		if a == name && i+1 < len(p.Args) {
			return p.Args[i+1]
		}
	}
	return ""
}
