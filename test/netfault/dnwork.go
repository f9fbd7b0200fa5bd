package netfault

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
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
	"github.com/strato-io/strato/wire"
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

// VerifyReport is what dnverify found.
type VerifyReport struct {
	// Keys checked: Closed ones (acknowledged whole), Hsynced ones never
	// closed (their hsynced prefix acknowledged), Other ones found in the
	// bucket (a close that failed after its commit went through).
	Closed, Hsynced, Other int
	// ClientBytes were read through the client.
	ClientBytes int64
	// ReplicaReads counts block replicas read on their own, ReplicaBytes
	// their bytes.
	ReplicaReads int
	ReplicaBytes int64
	// StaleLocations counts the blocks whose locations (LookupKey) name a
	// datanode meta has no report of a replica from: a member of the
	// block's pipeline whose replica was deleted since (a reader tries it
	// and moves on).
	StaleLocations int
	// Healthy: every container was whole, HealthAfter after the check
	// started (when it was asked for).
	Healthy     bool
	HealthAfter time.Duration
	Containers  int
	// Awaited is what the first look at the cluster found not whole (at
	// most five items), for the log; Empty what the last found empty
	// (health.Empty).
	Awaited, Empty []string
	Problems       []string
}

func (r *VerifyReport) String() string {
	s := fmt.Sprintf("%d closed keys, %d hsynced open keys, %d other keys; %.1f MiB read through the client, %d block replicas (%.1f MiB) read on their own",
		r.Closed, r.Hsynced, r.Other, float64(r.ClientBytes)/(1<<20), r.ReplicaReads, float64(r.ReplicaBytes)/(1<<20))
	if r.StaleLocations > 0 {
		s += fmt.Sprintf(" (%d blocks located on a datanode that holds no replica)", r.StaleLocations)
	}
	if r.Healthy {
		s += fmt.Sprintf("; all %d containers whole after %v", r.Containers, r.HealthAfter.Round(100*time.Millisecond))
	}
	if len(r.Empty) > 0 {
		s += fmt.Sprintf(" (%d of them empty and never finished)", len(r.Empty))
	}
	return s + fmt.Sprintf("; %d problems", len(r.Problems))
}

func (r *VerifyReport) problem(format string, args ...any) {
	r.Problems = append(r.Problems, fmt.Sprintf(format, args...))
}

// keyAcks is what the writers' records acknowledge of a key.
type keyAcks struct {
	closed bool
	hsync  int64 // the longest hsynced prefix
}

func readRecords(paths []string) (map[string]*keyAcks, error) {
	acks := map[string]*keyAcks{}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		dec := json.NewDecoder(bytes.NewReader(b))
		for {
			var r keyRecord
			if err := dec.Decode(&r); err == io.EOF {
				break
			} else if err != nil {
				return nil, fmt.Errorf("%s: %w", p, err)
			}
			a := acks[r.Key]
			if a == nil {
				a = &keyAcks{}
				acks[r.Key] = a
			}
			switch r.Event {
			case "closed":
				a.closed = true
			case "hsync":
				a.hsync = max(a.hsync, r.Len)
			}
		}
	}
	return acks, nil
}

// dnVerify checks the keys the records of cfg.Records acknowledge, and
// every other key of the bucket. With cfg.DatanodeID set it reads only the
// replicas meta places on that datanode (at cfg.Datanode), straight from
// it; otherwise, after waiting up to cfg.Health for every container to be
// whole (when cfg.Health is set), it reads each key through the client and
// every replica of each of its blocks on its own.
//
// An acknowledged key must be there: a closed one whole, an hsynced one
// that was never closed at least up to its longest hsync (an hsync
// publishes the key at that length; a later hsync whose answer was lost
// may have published more). Every key's bytes must be its name's.
func dnVerify(ctx context.Context, c *client.Client, cfg WorkConfig) (*VerifyReport, error) {
	start := time.Now()
	rep := &VerifyReport{}
	acks, err := readRecords(cfg.Records)
	if err != nil {
		return nil, err
	}
	if cfg.Health > 0 {
		var first, last *health
		rep.HealthAfter, first, last, err = waitHealthy(ctx, c, cfg, start)
		if err != nil {
			rep.problem("%v", err)
		} else {
			rep.Healthy = true
		}
		rep.Containers, rep.Empty = last.Containers, last.Empty
		rep.Awaited = first.Problems[:min(len(first.Problems), 5)]
	}
	reps := newReplicaReader()
	defer reps.close()
	if cfg.DatanodeID != "" {
		// Wait for the datanode to serve (it was just started).
		if err := retry(ctx, "reaching "+cfg.Datanode, func(ctx context.Context) error {
			_, err := reps.conn(ctx, cfg.Datanode)
			return err
		}); err != nil {
			return nil, err
		}
	}
	listed, err := listKeys(ctx, c)
	if err != nil {
		return nil, err
	}
	// Every key listed, and every acknowledged one (listed or not).
	names := slices.Sorted(maps.Keys(listed))
	for n, a := range acks {
		if !listed[n] && (a.closed || a.hsync > 0) {
			names = append(names, n)
		}
	}
	for _, name := range names {
		if name == "probe" {
			continue
		}
		a := acks[name]
		if a == nil {
			a = &keyAcks{}
		}
		switch {
		case a.closed:
			rep.Closed++
		case a.hsync > 0:
			rep.Hsynced++
		default:
			rep.Other++
		}
		dnVerifyKey(ctx, c, cfg, rep, reps, name, a)
	}
	return rep, nil
}

// dnVerifyKey checks one key (see dnVerify).
func dnVerifyKey(ctx context.Context, c *client.Client, cfg WorkConfig, rep *VerifyReport, reps *replicaReader, name string, a *keyAcks) {
	size, err := keySize(name)
	if err != nil {
		rep.problem("%v", err)
		return
	}
	var ki *stratov1.KeyInfo
	err = retryUnavailable(ctx, func(ctx context.Context) error {
		ki, err = c.LookupKey(ctx, volume, dnBucket, name)
		return err
	})
	switch {
	case err != nil && (a.closed || a.hsync > 0):
		rep.problem("key %s (closed %v, hsynced %d bytes) lost: %v", name, a.closed, a.hsync, err)
		return
	case err != nil:
		rep.problem("key %s was listed, but looking it up: %v", name, err)
		return
	case a.closed && ki.Size != size:
		rep.problem("key %s was closed with %d bytes, has %d", name, size, ki.Size)
	case !a.closed && ki.Size < a.hsync:
		rep.problem("key %s was hsynced at %d bytes and never closed, has %d", name, a.hsync, ki.Size)
	case ki.Size > size:
		rep.problem("key %s has %d bytes, more than the %d written", name, ki.Size, size)
		return
	}
	want := keyData(name, ki.Size)
	if cfg.DatanodeID == "" {
		got, err := readKey(ctx, c, name)
		rep.ClientBytes += int64(len(got))
		if err != nil {
			rep.problem("key %s (closed %v, hsynced %d bytes): reading through the client: %v", name, a.closed, a.hsync, err)
		} else if i := firstDiff(got, want); i >= 0 {
			rep.problem("key %s (closed %v, hsynced %d bytes): read %d bytes through the client, expected %d; first difference at %d",
				name, a.closed, a.hsync, len(got), len(want), i)
		}
	}
	var sum int64
	for _, bl := range ki.Blocks {
		if bl.Offset != sum || bl.Offset+bl.Length > ki.Size {
			rep.problem("key %s: block %v at %d+%d does not follow at %d in %d bytes", name, bl.BlockId, bl.Offset, bl.Length, sum, ki.Size)
			return
		}
		sum += bl.Length
		holders, err := reps.holders(ctx, c, cfg, rep, bl)
		if err != nil {
			rep.problem("key %s: block %d/%d: %v", name, bl.BlockId.GetContainerId(), bl.BlockId.GetLocalId(), err)
			continue
		}
		for _, m := range holders {
			rep.ReplicaReads++
			rep.ReplicaBytes += bl.Length
			if err := reps.check(ctx, m.DataAddr, bl, want[bl.Offset:bl.Offset+bl.Length]); err != nil {
				rep.problem("key %s (closed %v, hsynced %d bytes): block %d/%d (key bytes %d+%d) on datanode %s (%s): %v",
					name, a.closed, a.hsync, bl.BlockId.GetContainerId(), bl.BlockId.GetLocalId(), bl.Offset, bl.Length, m.Id, m.DataAddr, err)
			}
		}
	}
	if sum != ki.Size {
		rep.problem("key %s: blocks cover %d of %d bytes", name, sum, ki.Size)
	}
}

func firstDiff(got, want []byte) int {
	for i := range min(len(got), len(want)) {
		if got[i] != want[i] {
			return i
		}
	}
	if len(got) != len(want) {
		return min(len(got), len(want))
	}
	return -1
}

func readKey(ctx context.Context, c *client.Client, name string) ([]byte, error) {
	r, err := c.OpenKey(ctx, volume, dnBucket, name)
	if err != nil {
		return nil, err
	}
	defer func() { _ = r.Close() }()
	return io.ReadAll(r)
}

// retryUnavailable runs fn until it returns anything but Unavailable or
// DeadlineExceeded, for at most a minute.
func retryUnavailable(ctx context.Context, fn func(ctx context.Context) error) error {
	deadline := time.Now().Add(time.Minute)
	for {
		cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		err := fn(cctx)
		cancel()
		err = client.Classify(err)
		if err == nil || !errors.Is(err, client.ErrUnavailable) && !errors.Is(err, context.DeadlineExceeded) ||
			time.Now().After(deadline) || ctx.Err() != nil {
			return err
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// listKeys lists the bucket.
func listKeys(ctx context.Context, c *client.Client) (map[string]bool, error) {
	out := map[string]bool{}
	after := ""
	for {
		var resp *stratov1.ListKeysResponse
		if err := retryUnavailable(ctx, func(ctx context.Context) error {
			var err error
			resp, err = c.ListKeys(ctx, &stratov1.ListKeysRequest{Volume: volume, Bucket: dnBucket, StartAfter: after, Limit: 1000})
			return err
		}); err != nil {
			return nil, fmt.Errorf("listing the bucket: %w", err)
		}
		for _, k := range resp.Keys {
			out[k.Name] = true
		}
		if !resp.Truncated || len(resp.Keys) == 0 {
			return out, nil
		}
		after = resp.NextStartAfter
	}
}

// replicaReader reads block replicas from one datanode at a time over the
// data protocol, bypassing the client's choice of replica.
type replicaReader struct {
	conns map[string]*wire.Conn
	// The replicas meta has reports of, by container, and the datanodes
	// (see holders).
	replicas map[uint64]map[string]*stratov1.ContainerReplica
	nodes    map[string]*stratov1.DatanodeDetails
}

func newReplicaReader() *replicaReader {
	return &replicaReader{conns: map[string]*wire.Conn{}, replicas: map[uint64]map[string]*stratov1.ContainerReplica{}}
}

// holders returns the datanodes whose replicas of bl are to be read. With
// cfg.DatanodeID set: that datanode, if the key's locations name it (meta
// names the members of the block's pipeline and the datanodes that
// reported a replica since, until their replica is known bad). Otherwise:
// every datanode meta has a report of a replica from, but an UNHEALTHY one
// (after waitHealthy, the good copies); the locations LookupKey gave that
// are not among them are counted in rep.StaleLocations.
func (r *replicaReader) holders(ctx context.Context, c *client.Client, cfg WorkConfig, rep *VerifyReport, bl *stratov1.BlockLocation) ([]*stratov1.DatanodeDetails, error) {
	members := bl.GetPipeline().GetMembers()
	if cfg.DatanodeID != "" {
		for _, m := range members {
			if m.Id == cfg.DatanodeID {
				return []*stratov1.DatanodeDetails{m}, nil
			}
		}
		return nil, nil
	}
	if r.nodes == nil {
		dns, err := listDatanodes(ctx, c)
		if err != nil {
			return nil, err
		}
		r.nodes = map[string]*stratov1.DatanodeDetails{}
		for _, d := range dns {
			r.nodes[d.Details.GetId()] = d.Details
		}
	}
	cid := bl.BlockId.GetContainerId()
	reps, ok := r.replicas[cid]
	if !ok {
		cr, err := client.Cluster(ctx, c, func(ctx context.Context, cl client.ClusterStubs) (*stratov1.ContainerReplicasResponse, error) {
			return cl.ContainerReplicas(ctx, &stratov1.ContainerReplicasRequest{ContainerId: cid})
		})
		if err != nil {
			return nil, err
		}
		reps = cr.Replicas
		r.replicas[cid] = reps
	}
	var out []*stratov1.DatanodeDetails
	for _, id := range slices.Sorted(maps.Keys(reps)) {
		if reps[id].State == stratov1.ContainerState_CONTAINER_UNHEALTHY {
			continue
		}
		d := r.nodes[id]
		if d == nil {
			return nil, fmt.Errorf("a replica on datanode %s, which meta does not list", id)
		}
		out = append(out, d)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no replica of container %d reported", cid)
	}
	for _, m := range members {
		if _, ok := reps[m.Id]; !ok {
			rep.StaleLocations++
			break
		}
	}
	return out, nil
}

func (r *replicaReader) conn(ctx context.Context, addr string) (*wire.Conn, error) {
	if c := r.conns[addr]; c != nil && c.Err() == nil {
		return c, nil
	}
	c, err := wire.Dial(ctx, addr, wire.ConnOptions{ClientID: "netfault-verify"})
	if err != nil {
		return nil, err
	}
	r.conns[addr] = c
	return c, nil
}

func (r *replicaReader) close() {
	for _, c := range r.conns {
		_ = c.Close()
	}
}

// check reads [0, len(want)) of block bl from the datanode at addr alone,
// verifies its checksums and compares it with want.
func (r *replicaReader) check(ctx context.Context, addr string, bl *stratov1.BlockLocation, want []byte) error {
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	c, err := r.conn(ctx, addr)
	if err != nil {
		return err
	}
	id := wire.BlockID{ContainerID: bl.BlockId.GetContainerId(), LocalID: bl.BlockId.GetLocalId()}
	resp, payload, err := c.ReadChunk(ctx, &wire.ReadChunkRequest{Block: id, Length: uint32(len(want))}, nil)
	if err != nil {
		// Say what the replica holds of the block, if anything.
		if gb, gerr := c.GetBlock(ctx, &wire.GetBlockRequest{Block: id}); gerr == nil {
			return fmt.Errorf("%w (the replica's committed length is %d, bcsID %d)", err, gb.Length, gb.BCSID)
		} else {
			return fmt.Errorf("%w (block state: %w)", err, gerr)
		}
	}
	if err := resp.Verify(payload); err != nil {
		return err
	}
	if resp.Offset != 0 || int64(len(payload)) < int64(len(want)) {
		return fmt.Errorf("the reply covers [%d, %d), asked [0, %d)", resp.Offset, resp.Offset+int64(len(payload)), len(want))
	}
	if i := firstDiff(resp.Range(payload, 0, len(want)), want); i >= 0 {
		return fmt.Errorf("wrong bytes from %d on", i)
	}
	return nil
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
