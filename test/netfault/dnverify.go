package netfault

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"time"

	"github.com/strato-io/strato/client"
	"github.com/strato-io/strato/proto/strato/v1"
	"github.com/strato-io/strato/wire"
)

// The "dnverify" mode of the datanode-kill scenario: the keys the writers'
// records acknowledge, and every other key of the bucket, read back through
// the client and from each replica of their blocks on its own (dnVerify).

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
