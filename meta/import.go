package meta

import (
	"context"
	"errors"
	"fmt"

	"google.golang.org/protobuf/proto"

	"github.com/strato-io/strato/meta/cluster"
	"github.com/strato-io/strato/meta/namespace"
	"github.com/strato-io/strato/proto/strato/v1"
)

// Offline data generation (`strato bench gen`): containers written straight
// into datanode directories are recorded here, and keys made of their
// blocks, all through Raft like any other change.

// ImportContainer records a CLOSED container of replication repl held by
// members and reserves count block IDs for it.
func (s *Server) ImportContainer(ctx context.Context, repl stratov1.ReplicationFactor, members []string, count uint64) (*stratov1.ContainerInfo, cluster.IDRange, error) {
	if err := s.leaderOnly(); err != nil {
		return nil, cluster.IDRange{}, err
	}
	c, r, err := s.cl.ImportContainer(ctx, s.now(), repl, members, count)
	if err != nil {
		return nil, cluster.IDRange{}, toStatus(err)
	}
	return c, r, nil
}

// ImportKey creates a key made of existing blocks (each with its length and
// pipeline): OpenKey, AllocateBlock and CommitKey, with allocations that
// hand out exactly those blocks.
func (s *Server) ImportKey(ctx context.Context, volume, bucket, key string, repl stratov1.ReplicationFactor, blocks []*stratov1.BlockLocation) error {
	if err := s.leaderOnly(); err != nil {
		return err
	}
	if len(blocks) == 0 {
		return errors.New("meta: importing a key needs blocks")
	}
	alloc := &fixedBlocks{blocks: blocks}
	env := namespace.PrepareEnv{Now: s.now(), Allocator: alloc}
	do := func(req proto.Message) (proto.Message, error) {
		cmd, err := s.ns.Prepare(ctx, req, s.db, env)
		if err != nil {
			return nil, err
		}
		return s.proposeNamespace(ctx, cmd)
	}
	res, err := do(&stratov1.OpenKeyRequest{Volume: volume, Bucket: bucket, Key: key, SizeHint: 1, Replication: repl, Owner: "strato"})
	if err != nil {
		return toStatus(err)
	}
	open := res.(*stratov1.OpenKeyResponse)
	for range blocks[1:] {
		if _, err := do(&stratov1.AllocateBlockRequest{Volume: volume, Bucket: bucket, Key: key, OpenId: open.OpenId, SizeHint: 1}); err != nil {
			return toStatus(err)
		}
	}
	commit := &stratov1.CommitKeyRequest{Volume: volume, Bucket: bucket, Key: key, OpenId: open.OpenId}
	for _, bl := range blocks {
		commit.Blocks = append(commit.Blocks, &stratov1.BlockLocation{BlockId: bl.BlockId, Length: bl.Length})
	}
	if _, err := do(commit); err != nil {
		return toStatus(err)
	}
	return nil
}

// fixedBlocks allocates the given blocks, in order.
type fixedBlocks struct {
	blocks []*stratov1.BlockLocation
	next   int
}

func (f *fixedBlocks) AllocateBlock(context.Context, stratov1.ReplicationFactor, *stratov1.ErasureCodingRecord, int64, *stratov1.ExcludeList) (*stratov1.BlockRecord, error) {
	if f.next >= len(f.blocks) {
		return nil, fmt.Errorf("meta: import: more allocations than the %d blocks given", len(f.blocks))
	}
	bl := f.blocks[f.next]
	f.next++
	return namespace.BlockRecord(&stratov1.BlockLocation{BlockId: bl.BlockId, Pipeline: bl.Pipeline}), nil
}
