package meta

import (
	"context"
	"crypto/rand"
	"fmt"
	"strconv"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/strato-io/strato/meta/cluster"
	"github.com/strato-io/strato/meta/namespace"
	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

// The Namespace service. Mutations: prepare on the leader, propose, reply
// with what Apply produced. Reads: read barrier, then the database.

// mutate runs one namespace mutation through prepare → propose → apply.
func mutate[T proto.Message](ctx context.Context, s *Server, req proto.Message) (T, error) {
	return mutateWith[T](ctx, s, req, mutation{})
}

// mutation is what a few mutations add to mutate's defaults.
type mutation struct {
	// secret is the token secret of an IssueTokenRequest
	// (namespace.PrepareEnv.TokenSecret).
	secret []byte
	// noRequestID ignores the caller's request ID: the reply is not
	// recorded (it would keep a secret the database must not hold).
	noRequestID bool
}

func mutateWith[T proto.Message](ctx context.Context, s *Server, req proto.Message, m mutation) (T, error) {
	var zero T
	if err := s.leaderOnly(); err != nil {
		return zero, err
	}
	rid := requestID(ctx)
	if m.noRequestID {
		rid = nil
	}
	if rid != nil {
		// A retry of a request already applied gets its first reply.
		if out, done, err := recorded[T](s, rid); done || err != nil {
			return out, err
		}
	}
	if err := s.diskWritable(); err != nil {
		return zero, err
	}
	prepare := func() (*stratov1.NamespaceCommand, proto.Message, error) {
		cmd, err := s.ns.Prepare(ctx, req, s.db, namespace.PrepareEnv{Now: s.now(), Allocator: allocator{s}, Rand: rand.Reader,
			TokenSecret: m.secret, Caller: nsCaller(ctx)})
		if err != nil || !deferrable(req) || cmd.GetOpenKey() == nil {
			return cmd, nil, err
		}
		oc := cmd.GetOpenKey()
		write := s.deferWrite(oc)
		resp, err := s.ns.DeferOpen(s.db, oc)
		if resp == nil {
			oc.WriteNonce = nil
			return cmd, nil, err
		}
		if write {
			s.dw.add(resp.CreateToken, oc.Blocks, s.now())
		}
		return nil, resp, nil
	}
	cmd, deferred, err := prepare()
	if err != nil && namespace.Class(err) != nil {
		// Prepare read this replica's state, which lags the group's on a
		// leader that has not applied all its predecessor committed, or on
		// one deposed without knowing it yet (it was paused or cut off).
		// A check that passes is advisory (Apply checks again), but a
		// refusal is the client's answer: confirm it after a read barrier
		// (which fails with NotLeader on a deposed leader).
		if err := s.readBarrier(ctx); err != nil {
			return zero, err
		}
		cmd, deferred, err = prepare()
		if err != nil && rid != nil {
			// An earlier attempt of this request may have been applied
			// since the check above, and be why Prepare refuses: after the
			// barrier, its reply is recorded.
			if out, done, rerr := recorded[T](s, rid); done || rerr != nil {
				return out, rerr
			}
		}
	}
	if err != nil {
		return zero, toStatus(err)
	}
	if deferred != nil {
		// A deferred create: checked, nothing to record until its commit.
		out, ok := deferred.(T)
		if !ok {
			return zero, status.Errorf(codes.Internal, "meta: %T produced a %T reply", req, deferred)
		}
		return out, nil
	}
	taken, prev, err := s.takeWriteToken(ctx, req, rid)
	if err != nil {
		return zero, toStatus(err)
	}
	if out, ok := prev.(T); ok {
		return out, nil
	}
	cmd.Request = rid
	res, err := s.proposeNamespace(ctx, cmd)
	if err == nil && refused(res) {
		// A refusal of this request reached the log first: this attempt
		// changed nothing, and its token goes back to expire.
		err = ErrCreateTokenUnknown
	}
	if err != nil {
		s.returnWriteToken(taken, err)
		return zero, toStatus(err)
	}
	out, ok := res.(T)
	if !ok {
		return zero, status.Errorf(codes.Internal, "meta: %T produced a %T reply", req, res)
	}
	return out, nil
}

// recorded returns the reply recorded for request rid, if it was applied
// (done): its first reply, or CREATE_TOKEN_UNKNOWN for a refusal of its
// write token.
func recorded[T proto.Message](s *Server, rid *stratov1.RequestID) (out T, done bool, err error) {
	prev, found, err := s.ns.Reader(s.db).RecordedReply(rid)
	switch {
	case err != nil:
		return out, false, toStatus(err)
	case !found:
		return out, false, nil
	case refused(prev):
		return out, true, toStatus(ErrCreateTokenUnknown)
	}
	out, done = prev.(T)
	return out, done, nil
}

// deferrable reports whether req is an open whose caller takes a create
// token (OpenKeyResponse.create_token).
func deferrable(req proto.Message) bool {
	switch r := req.(type) {
	case *stratov1.CreateFileRequest:
		return r.GetDeferrable()
	case *stratov1.OpenKeyRequest:
		return r.GetDeferrable()
	}
	return false
}

// Request IDs travel in gRPC metadata, so that every mutation can carry
// one without a field in each request message.
const (
	mdClient  = "strato-client"
	mdRequest = "strato-request"
)

// requestID is the caller's request ID, if it sent one.
func requestID(ctx context.Context) *stratov1.RequestID {
	md, ok := metadata.FromIncomingContext(ctx)
	if !ok {
		return nil
	}
	c, r := md.Get(mdClient), md.Get(mdRequest)
	if len(c) != 1 || len(r) != 1 || c[0] == "" {
		return nil
	}
	seq, err := strconv.ParseUint(r[0], 10, 64)
	if err != nil {
		return nil
	}
	return &stratov1.RequestID{Client: c[0], Seq: seq}
}

// read serves one read after the read point (readPoint: on the leader, or
// on a follower for a caller that asked), authorized for the caller.
func read[T any](ctx context.Context, s *Server, f func(*namespace.Reader) (T, error)) (T, error) {
	var zero T
	ctx, err := s.readPoint(ctx)
	if err != nil {
		return zero, err
	}
	v, err := f(s.ns.Reader(s.db).As(nsCaller(ctx)))
	if err != nil {
		return zero, toStatus(err)
	}
	return v, nil
}

func (s *Server) CreateVolume(ctx context.Context, r *stratov1.CreateVolumeRequest) (*stratov1.CreateVolumeResponse, error) {
	return mutate[*stratov1.CreateVolumeResponse](ctx, s, r)
}

func (s *Server) DeleteVolume(ctx context.Context, r *stratov1.DeleteVolumeRequest) (*stratov1.DeleteVolumeResponse, error) {
	return mutate[*stratov1.DeleteVolumeResponse](ctx, s, r)
}

func (s *Server) SetQuota(ctx context.Context, r *stratov1.SetQuotaRequest) (*stratov1.SetQuotaResponse, error) {
	return mutate[*stratov1.SetQuotaResponse](ctx, s, r)
}

// UpdateVolume changes a volume's owner.
func (s *Server) UpdateVolume(ctx context.Context, r *stratov1.UpdateVolumeRequest) (*stratov1.UpdateVolumeResponse, error) {
	return mutate[*stratov1.UpdateVolumeResponse](ctx, s, r)
}

// UpdateBucket changes a bucket's owner or default redundancy.
func (s *Server) UpdateBucket(ctx context.Context, r *stratov1.UpdateBucketRequest) (*stratov1.UpdateBucketResponse, error) {
	return mutate[*stratov1.UpdateBucketResponse](ctx, s, r)
}

func (s *Server) CreateBucket(ctx context.Context, r *stratov1.CreateBucketRequest) (*stratov1.CreateBucketResponse, error) {
	return mutate[*stratov1.CreateBucketResponse](ctx, s, r)
}

func (s *Server) DeleteBucket(ctx context.Context, r *stratov1.DeleteBucketRequest) (*stratov1.DeleteBucketResponse, error) {
	return mutate[*stratov1.DeleteBucketResponse](ctx, s, r)
}

func (s *Server) OpenKey(ctx context.Context, r *stratov1.OpenKeyRequest) (*stratov1.OpenKeyResponse, error) {
	return mutate[*stratov1.OpenKeyResponse](ctx, s, r)
}

func (s *Server) CreateFile(ctx context.Context, r *stratov1.CreateFileRequest) (*stratov1.OpenKeyResponse, error) {
	return mutate[*stratov1.OpenKeyResponse](ctx, s, r)
}

func (s *Server) AllocateBlock(ctx context.Context, r *stratov1.AllocateBlockRequest) (*stratov1.AllocateBlockResponse, error) {
	return mutate[*stratov1.AllocateBlockResponse](ctx, s, r)
}

func (s *Server) CommitKey(ctx context.Context, r *stratov1.CommitKeyRequest) (*stratov1.CommitKeyResponse, error) {
	return mutate[*stratov1.CommitKeyResponse](ctx, s, r)
}

func (s *Server) DeleteKey(ctx context.Context, r *stratov1.DeleteKeyRequest) (*stratov1.DeleteKeyResponse, error) {
	res, err := mutate[*stratov1.DeleteResponse](ctx, s, r)
	if err != nil {
		return nil, err
	}
	return &stratov1.DeleteKeyResponse{VersionId: res.GetVersionId(), DeleteMarker: res.GetDeleteMarker()}, nil
}

func (s *Server) RenameKey(ctx context.Context, r *stratov1.RenameKeyRequest) (*stratov1.RenameKeyResponse, error) {
	if _, err := mutate[*stratov1.RenameResponse](ctx, s, r); err != nil {
		return nil, err
	}
	return &stratov1.RenameKeyResponse{}, nil
}

func (s *Server) SetAttributes(ctx context.Context, r *stratov1.SetAttributesRequest) (*stratov1.SetAttributesResponse, error) {
	return mutate[*stratov1.SetAttributesResponse](ctx, s, r)
}

// SetObjectLock changes the S3 object lock of a version (decision 0088).
func (s *Server) SetObjectLock(ctx context.Context, r *stratov1.SetObjectLockRequest) (*stratov1.SetObjectLockResponse, error) {
	return mutate[*stratov1.SetObjectLockResponse](ctx, s, r)
}

func (s *Server) CreateDirectory(ctx context.Context, r *stratov1.CreateDirectoryRequest) (*stratov1.CreateDirectoryResponse, error) {
	return mutate[*stratov1.CreateDirectoryResponse](ctx, s, r)
}

func (s *Server) Rename(ctx context.Context, r *stratov1.RenameRequest) (*stratov1.RenameResponse, error) {
	return mutate[*stratov1.RenameResponse](ctx, s, r)
}

func (s *Server) Delete(ctx context.Context, r *stratov1.DeleteRequest) (*stratov1.DeleteResponse, error) {
	return mutate[*stratov1.DeleteResponse](ctx, s, r)
}

func (s *Server) SetPermission(ctx context.Context, r *stratov1.SetPermissionRequest) (*stratov1.SetPermissionResponse, error) {
	return mutate[*stratov1.SetPermissionResponse](ctx, s, r)
}

func (s *Server) SetOwner(ctx context.Context, r *stratov1.SetOwnerRequest) (*stratov1.SetOwnerResponse, error) {
	return mutate[*stratov1.SetOwnerResponse](ctx, s, r)
}

func (s *Server) SetTimes(ctx context.Context, r *stratov1.SetTimesRequest) (*stratov1.SetTimesResponse, error) {
	return mutate[*stratov1.SetTimesResponse](ctx, s, r)
}

func (s *Server) AppendFile(ctx context.Context, r *stratov1.AppendFileRequest) (*stratov1.OpenKeyResponse, error) {
	resp, err := mutate[*stratov1.OpenKeyResponse](ctx, s, r)
	if err != nil {
		return nil, err
	}
	// The file's blocks where their replicas are now (the reply may be a
	// recorded one: a copy).
	resp = proto.Clone(resp).(*stratov1.OpenKeyResponse)
	s.currentLocations(&stratov1.KeyInfo{Blocks: resp.BaseBlocks})
	return resp, nil
}

func (s *Server) Truncate(ctx context.Context, r *stratov1.TruncateRequest) (*stratov1.TruncateResponse, error) {
	return mutate[*stratov1.TruncateResponse](ctx, s, r)
}

func (s *Server) Concat(ctx context.Context, r *stratov1.ConcatRequest) (*stratov1.ConcatResponse, error) {
	return mutate[*stratov1.ConcatResponse](ctx, s, r)
}

func (s *Server) RecoverLease(ctx context.Context, r *stratov1.RecoverLeaseRequest) (*stratov1.RecoverLeaseResponse, error) {
	return mutate[*stratov1.RecoverLeaseResponse](ctx, s, r)
}

func (s *Server) IsFileClosed(ctx context.Context, r *stratov1.IsFileClosedRequest) (*stratov1.IsFileClosedResponse, error) {
	return read(ctx, s, func(rd *namespace.Reader) (*stratov1.IsFileClosedResponse, error) { return rd.IsFileClosed(r) })
}

func (s *Server) GetVolume(ctx context.Context, r *stratov1.GetVolumeRequest) (*stratov1.VolumeInfo, error) {
	return read(ctx, s, func(rd *namespace.Reader) (*stratov1.VolumeInfo, error) { return rd.Volume(r.GetName()) })
}

func (s *Server) ListVolumes(ctx context.Context, r *stratov1.ListVolumesRequest) (*stratov1.ListVolumesResponse, error) {
	return read(ctx, s, func(rd *namespace.Reader) (*stratov1.ListVolumesResponse, error) { return rd.ListVolumes(r) })
}

func (s *Server) GetBucket(ctx context.Context, r *stratov1.GetBucketRequest) (*stratov1.BucketInfo, error) {
	return read(ctx, s, func(rd *namespace.Reader) (*stratov1.BucketInfo, error) { return rd.Bucket(r.GetVolume(), r.GetName()) })
}

func (s *Server) ListBuckets(ctx context.Context, r *stratov1.ListBucketsRequest) (*stratov1.ListBucketsResponse, error) {
	return read(ctx, s, func(rd *namespace.Reader) (*stratov1.ListBucketsResponse, error) { return rd.ListBuckets(r) })
}

func (s *Server) LookupKey(ctx context.Context, r *stratov1.LookupKeyRequest) (*stratov1.LookupKeyResponse, error) {
	resp, err := read(ctx, s, func(rd *namespace.Reader) (*stratov1.LookupKeyResponse, error) { return rd.LookupKey(r) })
	if err == nil {
		s.currentLocations(resp.GetKey())
	}
	return resp, err
}

// currentLocations points a key's blocks at the replicas that hold them
// now (copies move when datanodes are lost or decommissioned), rather than
// at the pipeline they were written through.
//
// Only the leader knows where the replicas are (the datanodes report to it
// alone): a follower serving a read leaves the pipeline recorded.
func (s *Server) currentLocations(k *stratov1.KeyInfo) {
	if !s.node.IsLeader() {
		return
	}
	for _, bl := range k.GetBlocks() {
		if p := bl.GetPipeline(); p != nil {
			p.Members = s.cl.Locations(bl.GetBlockId().GetContainerId(), p.Members)
		}
	}
}

func (s *Server) ListKeyVersions(ctx context.Context, r *stratov1.ListKeyVersionsRequest) (*stratov1.ListKeyVersionsResponse, error) {
	return read(ctx, s, func(rd *namespace.Reader) (*stratov1.ListKeyVersionsResponse, error) { return rd.ListKeyVersions(r) })
}

func (s *Server) ListKeys(ctx context.Context, r *stratov1.ListKeysRequest) (*stratov1.ListKeysResponse, error) {
	return read(ctx, s, func(rd *namespace.Reader) (*stratov1.ListKeysResponse, error) { return rd.ListKeys(r) })
}

func (s *Server) GetFileStatus(ctx context.Context, r *stratov1.GetFileStatusRequest) (*stratov1.GetFileStatusResponse, error) {
	return read(ctx, s, func(rd *namespace.Reader) (*stratov1.GetFileStatusResponse, error) { return rd.GetFileStatus(r) })
}

func (s *Server) ListStatus(ctx context.Context, r *stratov1.ListStatusRequest) (*stratov1.ListStatusResponse, error) {
	return read(ctx, s, func(rd *namespace.Reader) (*stratov1.ListStatusResponse, error) { return rd.ListStatus(r) })
}

// GetContentSummary adds up a page of the subtree at a path.
func (s *Server) GetContentSummary(ctx context.Context, r *stratov1.GetContentSummaryRequest) (*stratov1.GetContentSummaryResponse, error) {
	return read(ctx, s, func(rd *namespace.Reader) (*stratov1.GetContentSummaryResponse, error) { return rd.ContentSummary(r) })
}

// GetFsStatus is the cluster's raw space, from the leader's soft state
// (the datanodes' last reports), as GetClusterSummary's but for any caller.
func (s *Server) GetFsStatus(ctx context.Context, _ *stratov1.GetFsStatusRequest) (*stratov1.FsStatus, error) {
	if err := s.leaderOnly(); err != nil {
		return nil, err
	}
	return s.cl.Space(), nil
}

// namespaceTick expires open keys past their TTL, frees what deleted
// snapshots alone held and reclaims the subtrees of deleted directories, a
// bounded batch each.
func (s *Server) namespaceTick(ctx context.Context) error {
	now := s.now()
	cmd, err := s.ns.PrepareExpiry(s.db, now, s.opts.ReclaimBatch)
	if err != nil {
		return err
	}
	if cmd != nil {
		if _, err := s.proposeNamespace(ctx, cmd); err != nil {
			return fmt.Errorf("expiring open keys: %w", err)
		}
	}
	// Reclaim in small commands within a fifth of the tick, so that a big
	// deleted subtree never stalls the writes of clients (every command
	// goes through the same log and apply as theirs); the rest waits for
	// the next tick. (Real time: the budget is of work done, whatever the
	// Clock says.)
	if err := s.purgeSnapshots(ctx, now, s.opts.TickInterval/10); err != nil {
		return err
	}
	start := time.Now()
	for time.Since(start) < s.opts.TickInterval/5 {
		cmd, err := s.ns.PrepareReclaim(s.db, now, s.opts.ReclaimBatch)
		if err != nil || cmd == nil {
			return err
		}
		res, err := s.proposeNamespace(ctx, cmd)
		if err != nil {
			return fmt.Errorf("reclaiming deleted directories: %w", err)
		}
		if more, ok := res.(interface{ GetMore() bool }); !ok || !more.GetMore() {
			return nil
		}
	}
	return nil
}

// CloseContainer closes a container a client failed to write to (and its
// pipeline, when a failed member is named).
func (s *Server) CloseContainer(ctx context.Context, req *stratov1.CloseContainerRequest) (*stratov1.CloseContainerResponse, error) {
	if err := s.leaderOnly(); err != nil {
		return nil, err
	}
	cmds, err := s.cl.CloseContainer(s.now(), req.GetContainerId(), req.GetFailedDatanode())
	if err != nil {
		return nil, toStatus(err)
	}
	s.opts.Logger.Info("closing container at a client's request", "container", req.GetContainerId(),
		"failed", req.GetFailedDatanode(), "reason", req.GetReason(), "changes", len(cmds))
	for _, cmd := range cmds {
		if _, err := s.proposeCluster(ctx, cmd); err != nil {
			return nil, toStatus(err)
		}
	}
	return &stratov1.CloseContainerResponse{}, nil
}

// ReportReplica marks a replica a client read bad data from as unhealthy.
func (s *Server) ReportReplica(ctx context.Context, req *stratov1.ReportReplicaRequest) (*stratov1.ReportReplicaResponse, error) {
	if err := s.leaderOnly(); err != nil {
		return nil, err
	}
	s.opts.Logger.Warn("bad replica reported", "container", req.GetContainerId(), "datanode", req.GetDatanodeId(),
		"block", req.GetLocalId(), "reason", req.GetReason())
	if err := s.cl.MarkUnhealthy(req.GetContainerId(), req.GetDatanodeId()); err != nil {
		return nil, toStatus(err)
	}
	return &stratov1.ReportReplicaResponse{}, nil
}

// allocator adapts the cluster manager to namespace.BlockAllocator.
type allocator struct{ s *Server }

func (a allocator) AllocateBlock(ctx context.Context, repl stratov1.ReplicationFactor, e *stratov1.ErasureCodingRecord, sizeHint int64, ex *stratov1.ExcludeList) (*stratov1.BlockRecord, error) {
	r := cluster.Replicated(repl)
	if e != nil {
		r = cluster.ErasureCoded(e)
	}
	al, err := a.s.cl.Allocate(ctx, a.s.now(), r, sizeHint, cluster.Exclude{
		Datanodes: ex.GetDatanodes(), Containers: ex.GetContainers(), Pipelines: ex.GetPipelines()})
	if err != nil {
		return nil, err
	}
	return &stratov1.BlockRecord{
		BlockId:  &stratov1.BlockIDRecord{ContainerId: al.ContainerID, LocalId: al.LocalID},
		Pipeline: &stratov1.BlockPipelineRecord{Id: al.Pipeline.Id, Members: namespace.BlockMembers(al.Members)},
	}, nil
}
