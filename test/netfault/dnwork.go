package netfault

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"maps"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/strato-io/strato/client"
	"github.com/strato-io/strato/proto/strato/v1"
)

// The helper modes of the datanode-kill scenario (RunDatanodeKill):
// "dnsetup" makes its bucket, "dnwrite" runs writers, "dnverify" checks.

// The datanode-kill scenario writes to an OBS bucket of small blocks, so
// that keys of a few hundred KiB cross blocks: a block is dnBlockChunks of
// the client's 64 KiB chunks (runMode's client), and a writer commits a
// block's length with a PutBlock every four acknowledged chunks.
const (
	dnBucket      = "dnkill"
	dnChunk       = 64 << 10
	dnBlockChunks = 4
	dnBlock       = dnBlockChunks * dnChunk
)

// Key kinds the writers draw.
const (
	kindChunk     = "chunk"     // one chunk or less
	kindChunks    = "chunks"    // several chunks in one block
	kindBlocks    = "blocks"    // two to four blocks
	kindHsync     = "hsync"     // several chunks or blocks, an hsync partway, then closed
	kindHsyncOpen = "hsyncopen" // the same, but more written after the hsync and never closed
)

// keyRecord is a line of a writer's record: a key's hsync or close that
// returned (the writer's acknowledgements), or a write that failed.
type keyRecord struct {
	Key string `json:"k"`
	// Event is "hsync" (Len bytes are durable and published), "closed"
	// (the whole key, of the size its name says) or "failed".
	Event string `json:"e"`
	Len   int64  `json:"n,omitempty"`
	Err   string `json:"err,omitempty"`
	T     int64  `json:"t"`
}

// keyName names a key by its writer, sequence number, kind and size; its
// content follows from the name (keyData), so any key found in the bucket
// can be checked.
func keyName(host string, worker, seq int, kind string, size int) string {
	return fmt.Sprintf("%s/%d/%05d-%s-%d", host, worker, seq, kind, size)
}

// keySize is the size a key's name says.
func keySize(name string) (int64, error) {
	i := strings.LastIndexByte(name, '-')
	n, err := strconv.ParseInt(name[i+1:], 10, 64)
	if i < 0 || err != nil || n < 0 {
		return 0, fmt.Errorf("key %q does not end with its size", name)
	}
	return n, nil
}

// keyData is the content of the key called name: n pseudo-random bytes
// seeded by the name.
func keyData(name string, n int64) []byte {
	h := fnv.New64a()
	_, _ = h.Write([]byte(name))
	var seed [32]byte
	binary.LittleEndian.PutUint64(seed[:], h.Sum64())
	b := make([]byte, n)
	_, _ = rand.NewChaCha8(seed).Read(b)
	return b
}

// runDatanodeKillMode runs one of the scenario's helper modes.
func runDatanodeKillMode(ctx context.Context, c *client.Client, mode string, cfg WorkConfig) error {
	switch mode {
	case "dnsetup":
		return dnSetup(ctx, c, cfg)
	case "dnwrite":
		t, err := dnWrite(ctx, c, cfg)
		if err != nil {
			return err
		}
		return json.NewEncoder(os.Stdout).Encode(t)
	case "dnverify":
		rep, err := dnVerify(ctx, c, cfg)
		if err != nil {
			return err
		}
		return json.NewEncoder(os.Stdout).Encode(rep)
	}
	return fmt.Errorf("unknown mode %q", mode)
}

// dnSetup makes the volume and the bucket, waits for cfg.Datanodes healthy
// datanodes (so that the pipelines span them all) and writes a key.
func dnSetup(ctx context.Context, c *client.Client, cfg WorkConfig) error {
	if err := retry(ctx, "volume", func(ctx context.Context) error {
		_, err := c.CreateVolume(ctx, &stratov1.CreateVolumeRequest{Name: volume})
		return ignoreExists(err)
	}); err != nil {
		return err
	}
	if err := retry(ctx, "bucket", func(ctx context.Context) error {
		_, err := c.CreateBucket(ctx, &stratov1.CreateBucketRequest{Volume: volume, Name: dnBucket,
			Layout: stratov1.BucketLayout_LAYOUT_OBS, BlockSize: dnBlock})
		return ignoreExists(err)
	}); err != nil {
		return err
	}
	if err := retry(ctx, "datanodes", func(ctx context.Context) error {
		dns, err := listDatanodes(ctx, c)
		if err != nil {
			return err
		}
		healthy := 0
		for _, d := range dns {
			if d.Health == stratov1.NodeHealth_NODE_HEALTHY {
				healthy++
			}
		}
		if healthy < cfg.Datanodes {
			return fmt.Errorf("%d of %d datanodes healthy", healthy, cfg.Datanodes)
		}
		return nil
	}); err != nil {
		return err
	}
	return retry(ctx, "probe write", func(ctx context.Context) error {
		return writeAll(c.CreateKey(ctx, volume, dnBucket, "probe", client.WriteOptions{SizeHint: 5}))("probe")
	})
}

// WriteTally counts what the writers did.
type WriteTally struct {
	Keys int // keys started
	// Closed keys are acknowledged whole; Hsynced keys had an hsync
	// return, and Open ones of those were left open on purpose.
	Closed, Hsynced, Open int
	// Failed writes (an error from a write, an hsync or a close).
	Failed int
	Bytes  int64 // in closed keys
}

func (t *WriteTally) add(u WriteTally) {
	t.Keys += u.Keys
	t.Closed += u.Closed
	t.Hsynced += u.Hsynced
	t.Open += u.Open
	t.Failed += u.Failed
	t.Bytes += u.Bytes
}

func (t WriteTally) String() string {
	return fmt.Sprintf("%d keys: %d closed (%.1f MiB), %d hsynced (%d of them left open), %d failed",
		t.Keys, t.Closed, float64(t.Bytes)/(1<<20), t.Hsynced, t.Open, t.Failed)
}

// recordFile appends keyRecords to a file, a whole line per write (the
// file is complete up to the last acknowledgement whenever the process
// ends).
type recordFile struct {
	mu sync.Mutex
	f  *os.File
}

func (r *recordFile) add(rec keyRecord) error {
	rec.T = Now()
	b, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	_, err = r.f.Write(append(b, '\n'))
	return err
}

// dnWrite runs cfg.Workers writers for cfg.Duration, recording to cfg.Out.
func dnWrite(ctx context.Context, c *client.Client, cfg WorkConfig) (WriteTally, error) {
	f, err := os.Create(cfg.Out)
	if err != nil {
		return WriteTally{}, err
	}
	rec := &recordFile{f: f}
	deadline := time.Now().Add(cfg.Duration)
	tallies := make([]WriteTally, cfg.Workers)
	errs := make([]error, cfg.Workers)
	var wg sync.WaitGroup
	for i := range cfg.Workers {
		rng := rand.New(rand.NewPCG(cfg.Seed, uint64(i)))
		wg.Go(func() {
			for seq := 1; ctx.Err() == nil && time.Now().Before(deadline); seq++ {
				if errs[i] = dnWriteKey(ctx, c, cfg, rec, rng, i, seq, &tallies[i]); errs[i] != nil {
					return
				}
				time.Sleep(time.Duration(50+rng.IntN(200)) * time.Millisecond)
			}
		})
	}
	wg.Wait()
	var t WriteTally
	for _, u := range tallies {
		t.add(u)
	}
	return t, errors.Join(append(errs, f.Sync(), f.Close())...)
}

// dnWriteKey writes one key of a kind drawn from rng, in pieces of random
// size, and records its acknowledgements. Only a failure to record is an
// error.
func dnWriteKey(ctx context.Context, c *client.Client, cfg WorkConfig, rec *recordFile, rng *rand.Rand, worker, seq int, t *WriteTally) error {
	var kind string
	var size int
	switch r := rng.IntN(100); {
	case r < 20:
		kind, size = kindChunk, 1+rng.IntN(dnChunk)
	case r < 40:
		kind, size = kindChunks, dnChunk+1+rng.IntN(dnBlock-dnChunk)
	case r < 65:
		kind, size = kindBlocks, dnBlock+1+rng.IntN(3*dnBlock)
	case r < 85:
		kind, size = kindHsync, 2*dnChunk+rng.IntN(4*dnBlock-2*dnChunk)
	default:
		kind, size = kindHsyncOpen, 2*dnChunk+rng.IntN(4*dnBlock-2*dnChunk)
	}
	name := keyName(cfg.Host, worker, seq, kind, size)
	data := keyData(name, int64(size))
	hsyncAt, stopAt := -1, size
	if kind == kindHsync || kind == kindHsyncOpen {
		hsyncAt = 1 + rng.IntN(size-1)
	}
	if kind == kindHsyncOpen {
		stopAt = hsyncAt + rng.IntN(size-hsyncAt+1)
	}
	hint := int64(0)
	if rng.IntN(2) == 0 {
		hint = int64(size)
	}
	t.Keys++
	wctx, cancel := context.WithTimeout(ctx, cfg.OpTimeout)
	defer cancel() // an open key's writer is abandoned with it
	fail := func(what string, err error) error {
		t.Failed++
		return rec.add(keyRecord{Key: name, Event: "failed", Err: fmt.Sprintf("%s: %v", what, err)})
	}
	w, err := c.CreateKey(wctx, volume, dnBucket, name, client.WriteOptions{SizeHint: hint})
	if err != nil {
		return fail("open", err)
	}
	for off := 0; off < stopAt; {
		end := min(off+1+rng.IntN(96<<10), stopAt)
		if off < hsyncAt && end >= hsyncAt {
			end = hsyncAt
		}
		if _, err := w.Write(data[off:end]); err != nil {
			_ = w.Close()
			return fail(fmt.Sprintf("write at %d", off), err)
		}
		off = end
		if off == hsyncAt {
			if err := w.Hsync(); err != nil {
				_ = w.Close()
				return fail(fmt.Sprintf("hsync at %d", off), err)
			}
			t.Hsynced++
			if err := rec.add(keyRecord{Key: name, Event: "hsync", Len: int64(off)}); err != nil {
				return err
			}
		}
	}
	if kind == kindHsyncOpen {
		t.Open++
		return nil
	}
	if err := w.Close(); err != nil {
		return fail("close", err)
	}
	t.Closed++
	t.Bytes += int64(size)
	return rec.add(keyRecord{Key: name, Event: "closed"})
}

func listDatanodes(ctx context.Context, c *client.Client) ([]*stratov1.DatanodeInfo, error) {
	resp, err := client.Cluster(ctx, c, func(ctx context.Context, cl client.ClusterStubs) (*stratov1.ListDatanodesResponse, error) {
		return cl.ListDatanodes(ctx, &stratov1.ListDatanodesRequest{})
	})
	return resp.GetDatanodes(), err
}

// health is one look at the cluster.
type health struct {
	Containers int
	// Problems keep the cluster from being whole.
	Problems []string
	// Empty are the containers no datanode holds that meta leaves OPEN on
	// a closed pipeline or CLOSING for good: allocated, never written, and
	// closed with their pipeline (or created on it as it closed). With no
	// replica to count or copy they are not held against the cluster; an
	// acknowledged block in one would be missing from every read.
	Empty []string
}

// waitHealthy waits until every datanode has been heard from since start
// (the killed one registered again) and is healthy, and every container is
// whole (containerProblem), for at most cfg.Health. It returns how long
// that took, and the first and the last look at the cluster.
func waitHealthy(ctx context.Context, c *client.Client, cfg WorkConfig, start time.Time) (time.Duration, *health, *health, error) {
	deadline := start.Add(cfg.Health)
	var first *health
	for {
		h, err := lookAtCluster(ctx, c, cfg, start)
		if err != nil {
			h = &health{Problems: []string{err.Error()}}
		}
		if first == nil {
			first = h
		}
		if err == nil && len(h.Problems) == 0 {
			return time.Since(start), first, h, nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			last := h.Problems
			if len(last) > 20 {
				last = append(last[:20:20], fmt.Sprintf("and %d more", len(last)-20))
			}
			return 0, first, h, fmt.Errorf("the cluster is not whole %v after the killed datanode came back (%d containers): %s",
				cfg.Health, h.Containers, strings.Join(last, "; "))
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// lookAtCluster finds what keeps the cluster from being whole now.
func lookAtCluster(ctx context.Context, c *client.Client, cfg WorkConfig, since time.Time) (*health, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	dns, err := listDatanodes(ctx, c)
	if err != nil {
		return nil, err
	}
	h := &health{}
	nodes := map[string]*stratov1.DatanodeInfo{}
	for _, d := range dns {
		nodes[d.Details.GetId()] = d
		if d.Health != stratov1.NodeHealth_NODE_HEALTHY || d.LastHeartbeatUnixMs < since.UnixMilli() {
			h.Problems = append(h.Problems, fmt.Sprintf("datanode %s is %s, last heard from at %s", d.Details.GetId(), d.Health,
				time.UnixMilli(d.LastHeartbeatUnixMs).Format("15:04:05.000")))
		}
	}
	if len(dns) != cfg.Datanodes {
		h.Problems = append(h.Problems, fmt.Sprintf("%d datanodes registered, want %d", len(dns), cfg.Datanodes))
	}
	pl, err := client.Cluster(ctx, c, func(ctx context.Context, cl client.ClusterStubs) (*stratov1.ListPipelinesResponse, error) {
		return cl.ListPipelines(ctx, &stratov1.ListPipelinesRequest{})
	})
	if err != nil {
		return nil, err
	}
	pipes := map[uint64]*stratov1.PipelineInfo{}
	for _, p := range pl.Pipelines {
		pipes[p.Id] = p
	}
	var after uint64
	for {
		lc, err := client.Cluster(ctx, c, func(ctx context.Context, cl client.ClusterStubs) (*stratov1.ListContainersResponse, error) {
			return cl.ListContainers(ctx, &stratov1.ListContainersRequest{StartAfter: after, Limit: 1000})
		})
		if err != nil {
			return nil, err
		}
		if len(lc.Containers) == 0 {
			return h, nil
		}
		for _, ci := range lc.Containers {
			after = ci.Id
			h.Containers++
			cr, err := client.Cluster(ctx, c, func(ctx context.Context, cl client.ClusterStubs) (*stratov1.ContainerReplicasResponse, error) {
				return cl.ContainerReplicas(ctx, &stratov1.ContainerReplicasRequest{ContainerId: ci.Id})
			})
			if err != nil {
				return nil, err
			}
			problem, empty := containerProblem(cr.Container, cr.Replicas, nodes, pipes[ci.PipelineId])
			switch {
			case problem != "":
				h.Problems = append(h.Problems, problem)
			case empty:
				h.Empty = append(h.Empty, fmt.Sprintf("container %d %s on pipeline %d (%s)", ci.Id, ci.State, ci.PipelineId, pipes[ci.PipelineId].GetState()))
			}
		}
	}
}

// containerProblem says what keeps a container from being whole, or "":
//
//   - CLOSED: at least its replication factor of CLOSED replicas on
//     healthy, in-service datanodes, all at the container's highest block
//     commit sequence ID, and no other replica (an UNHEALTHY one is deleted
//     once the copies are enough, one still closing must close);
//   - OPEN: its pipeline open on healthy datanodes, and an OPEN replica on
//     each of them, or on none (a container is created on the datanodes by
//     its first write);
//   - DELETED: nothing.
//
// A container with no replica at all that is CLOSING, or OPEN on a closed
// pipeline, is empty (see health.Empty).
func containerProblem(ci *stratov1.ContainerInfo, reps map[string]*stratov1.ContainerReplica, nodes map[string]*stratov1.DatanodeInfo, p *stratov1.PipelineInfo) (problem string, empty bool) {
	ids := slices.Sorted(maps.Keys(reps))
	describe := func() string {
		var parts []string
		for _, id := range ids {
			r := reps[id]
			h := "unknown"
			if d := nodes[id]; d != nil {
				h = d.Health.String()
			}
			parts = append(parts, fmt.Sprintf("%s %s bcsID %d on a %s node", id, r.State, r.BcsId, h))
		}
		return fmt.Sprintf("container %d %s (pipeline %d), %d replicas [%s]", ci.Id, ci.State, ci.PipelineId, len(reps), strings.Join(parts, ", "))
	}
	good := func(id string) bool {
		d := nodes[id]
		return d != nil && d.Health == stratov1.NodeHealth_NODE_HEALTHY && d.OpState == stratov1.NodeOpState_NODE_IN_SERVICE
	}
	factor := int(ci.Replication)
	switch ci.State {
	case stratov1.ContainerState_CONTAINER_DELETED:
		return "", false
	case stratov1.ContainerState_CONTAINER_CLOSING:
		if len(reps) == 0 {
			return "", true
		}
		return describe() + ": still closing", false
	case stratov1.ContainerState_CONTAINER_OPEN:
		if p == nil || p.State != stratov1.PipelineState_PIPELINE_OPEN {
			if len(reps) == 0 {
				return "", true
			}
			return describe() + ": open on a pipeline that is not", false
		}
		for _, m := range p.Members {
			if !good(m) {
				return describe() + ": open on a pipeline with a datanode not healthy: " + m, false
			}
		}
		for _, id := range ids {
			if !slices.Contains(p.Members, id) || reps[id].State != stratov1.ContainerState_CONTAINER_OPEN {
				return describe() + ": a replica off its pipeline or not open", false
			}
		}
		if len(reps) != 0 && len(reps) != len(p.Members) {
			return describe() + fmt.Sprintf(": open with %d replicas on a pipeline of %d", len(reps), len(p.Members)), false
		}
		return "", false
	case stratov1.ContainerState_CONTAINER_CLOSED:
		var top uint64
		for _, r := range reps {
			if r.State == stratov1.ContainerState_CONTAINER_CLOSED {
				top = max(top, r.BcsId)
			}
		}
		n := 0
		for _, id := range ids {
			r := reps[id]
			if r.State != stratov1.ContainerState_CONTAINER_CLOSED || r.BcsId != top {
				return describe() + ": a replica not CLOSED at the top bcsID", false
			}
			if good(id) {
				n++
			}
		}
		if n < factor {
			return describe() + fmt.Sprintf(": %d good replicas, want %d", n, factor), false
		}
		return "", false
	}
	return describe() + ": in an unexpected state", false
}
