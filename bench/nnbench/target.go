package nnbench

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"google.golang.org/grpc"

	"github.com/strato-io/strato/client"
	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

// ClusterAdmin is what only an in-process meta offers the benchmark: the
// replication benchmark's decommissioning and replication passes.
type ClusterAdmin interface {
	Decommission(ctx context.Context, datanodeID string) error
	ReplicationWork(ctx context.Context, limit int) (scheduled int, err error)
	CloseAllContainers(ctx context.Context) error
}

// ServiceTarget drives meta through its two gRPC services' interfaces:
// the server object itself in standalone mode (direct calls, no RPC), or
// remoteNamespace/remoteDatanodes over a connection.
type ServiceTarget struct {
	NS        stratov1.NamespaceServiceServer
	Datanodes stratov1.DatanodeServiceServer
	Admin     ClusterAdmin // nil when remote
	Volume    string
	Bucket    string
	// NoDeferredCreate makes every create open its key through Raft (two
	// entries per create and close, as before deferred creates).
	NoDeferredCreate bool

	reports sync.Map // datanode ID + state → prebuilt *stratov1.HeartbeatRequest
}

// Setup creates the benchmark's volume and FSO bucket if they are missing.
func (t *ServiceTarget) Setup(ctx context.Context, replication int) error {
	if _, err := t.NS.CreateVolume(ctx, &stratov1.CreateVolumeRequest{Name: t.Volume}); err != nil && !errors.Is(client.Classify(err), client.ErrExists) {
		return fmt.Errorf("creating volume %s: %w", t.Volume, err)
	}
	_, err := t.NS.CreateBucket(ctx, &stratov1.CreateBucketRequest{Volume: t.Volume, Name: t.Bucket,
		Layout: stratov1.BucketLayout_LAYOUT_FSO, Replication: stratov1.ReplicationFactor(replication)})
	if err != nil && !errors.Is(client.Classify(err), client.ErrExists) {
		return fmt.Errorf("creating bucket %s/%s: %w", t.Volume, t.Bucket, err)
	}
	return nil
}

func rel(p string) string { return strings.TrimPrefix(p, "/") }

func (t *ServiceTarget) Create(ctx context.Context, path string, willComplete bool) (CreateHandle, error) {
	r, err := t.NS.CreateFile(ctx, &stratov1.CreateFileRequest{Volume: t.Volume, Bucket: t.Bucket, Path: rel(path), Overwrite: true, Recursive: true,
		Deferrable: willComplete && !t.NoDeferredCreate})
	if err != nil {
		return CreateHandle{}, err
	}
	return CreateHandle{Path: path, ID: r.OpenId, Token: r.CreateToken}, nil
}

func (t *ServiceTarget) Complete(ctx context.Context, h CreateHandle) error {
	_, err := t.NS.CommitKey(ctx, &stratov1.CommitKeyRequest{Volume: t.Volume, Bucket: t.Bucket, Key: rel(h.Path), OpenId: h.ID,
		CreateToken: h.Token})
	return err
}

func (t *ServiceTarget) Mkdirs(ctx context.Context, path string) error {
	_, err := t.NS.CreateDirectory(ctx, &stratov1.CreateDirectoryRequest{Volume: t.Volume, Bucket: t.Bucket, Path: rel(path)})
	return err
}

func (t *ServiceTarget) Open(ctx context.Context, path string) error {
	_, err := t.NS.LookupKey(ctx, &stratov1.LookupKeyRequest{Volume: t.Volume, Bucket: t.Bucket, Key: rel(path)})
	return err
}

func (t *ServiceTarget) FileStatus(ctx context.Context, path string) error {
	_, err := t.NS.GetFileStatus(ctx, &stratov1.GetFileStatusRequest{Volume: t.Volume, Bucket: t.Bucket, Path: rel(path)})
	return err
}

func (t *ServiceTarget) Delete(ctx context.Context, path string, recursive bool) error {
	_, err := t.NS.Delete(ctx, &stratov1.DeleteRequest{Volume: t.Volume, Bucket: t.Bucket, Path: rel(path), Recursive: recursive})
	return err
}

func (t *ServiceTarget) Rename(ctx context.Context, src, dst string) error {
	_, err := t.NS.Rename(ctx, &stratov1.RenameRequest{Volume: t.Volume, Bucket: t.Bucket, Src: rel(src), Dst: rel(dst)})
	return err
}

func (t *ServiceTarget) List(ctx context.Context, dir, after string) (int, string, bool, error) {
	r, err := t.NS.ListStatus(ctx, &stratov1.ListStatusRequest{Volume: t.Volume, Bucket: t.Bucket, Path: rel(dir), StartAfter: after})
	if err != nil {
		return 0, "", false, err
	}
	sts := r.GetStatuses()
	if len(sts) == 0 {
		return 0, "", false, nil
	}
	return len(sts), pathBase(sts[len(sts)-1].GetPath()), r.GetTruncated(), nil
}

// pathBase is the last element of a slash-separated path.
func pathBase(p string) string { return p[strings.LastIndexByte(p, '/')+1:] }

func (t *ServiceTarget) Exists(ctx context.Context, path string) (bool, error) {
	err := t.FileStatus(ctx, path)
	if isNotFound(err) {
		return false, nil
	}
	return err == nil, err
}

func (t *ServiceTarget) RegisterDatanode(ctx context.Context, dn SimDatanode) error {
	_, err := t.Datanodes.Register(ctx, &stratov1.RegisterRequest{
		Details: &stratov1.DatanodeDetails{Id: dn.ID, DataAddr: dn.Addr, Hostname: dn.ID},
		Stats:   &stratov1.NodeStats{Capacity: 100 << 40, Remaining: 100 << 40, Volumes: 1},
	})
	return err
}

func (t *ServiceTarget) CreateFileWithBlocks(ctx context.Context, path string, n, replication int) ([]SimBlock, error) {
	r, err := t.NS.CreateFile(ctx, &stratov1.CreateFileRequest{Volume: t.Volume, Bucket: t.Bucket, Path: rel(path), Overwrite: true, Recursive: true,
		SizeHint: 1, Replication: stratov1.ReplicationFactor(replication)})
	if err != nil {
		return nil, err
	}
	blocks := r.Blocks
	for len(blocks) < n {
		a, err := t.NS.AllocateBlock(ctx, &stratov1.AllocateBlockRequest{Volume: t.Volume, Bucket: t.Bucket, Key: rel(path), OpenId: r.OpenId, SizeHint: 1})
		if err != nil {
			return nil, err
		}
		blocks = append(blocks, a.Block)
	}
	out := make([]SimBlock, len(blocks))
	for i, b := range blocks {
		b.Length = 16 // NNThroughputBenchmark's block size
		sb := SimBlock{Container: b.GetBlockId().GetContainerId()}
		for _, m := range b.GetPipeline().GetMembers() {
			sb.Nodes = append(sb.Nodes, m.Id)
		}
		out[i] = sb
	}
	_, err = t.NS.CommitKey(ctx, &stratov1.CommitKeyRequest{Volume: t.Volume, Bucket: t.Bucket, Key: rel(path), OpenId: r.OpenId, Blocks: blocks})
	return out, err
}

func (t *ServiceTarget) ContainerReport(ctx context.Context, dn SimDatanode, containers []uint64, closed bool) error {
	// Built once per datanode, as Hadoop's benchmark forms its block reports
	// before timing starts.
	key := fmt.Sprint(dn.ID, closed, len(containers))
	req, ok := t.reports.Load(key)
	if !ok {
		state := stratov1.ContainerState_CONTAINER_OPEN
		if closed {
			state = stratov1.ContainerState_CONTAINER_CLOSED
		}
		rep := &stratov1.ContainerReport{Full: true, Replicas: make([]*stratov1.ContainerReplica, len(containers))}
		for i, c := range containers {
			rep.Replicas[i] = &stratov1.ContainerReplica{ContainerId: c, State: state, UsedBytes: 16, BlockCount: 1}
		}
		req, _ = t.reports.LoadOrStore(key, &stratov1.HeartbeatRequest{DatanodeId: dn.ID, Report: rep})
	}
	_, err := t.Datanodes.Heartbeat(ctx, req.(*stratov1.HeartbeatRequest))
	return err
}

func (t *ServiceTarget) Decommission(ctx context.Context, dn SimDatanode) error {
	if t.Admin == nil {
		return ErrReplicationRemote
	}
	return t.Admin.Decommission(ctx, dn.ID)
}

func (t *ServiceTarget) ReplicationWork(ctx context.Context, limit int) (int, error) {
	if t.Admin == nil {
		return 0, ErrReplicationRemote
	}
	return t.Admin.ReplicationWork(ctx, limit)
}

func (t *ServiceTarget) CloseContainers(ctx context.Context) error {
	if t.Admin == nil {
		return ErrReplicationRemote
	}
	return t.Admin.CloseAllContainers(ctx)
}

// remoteNamespace adapts a Namespace client to the server interface, for
// the calls the benchmark makes.
type remoteNamespace struct {
	stratov1.UnimplementedNamespaceServiceServer
	C stratov1.NamespaceServiceClient
}

// NewRemote returns a target over a gRPC connection to meta.
func NewRemote(conn grpc.ClientConnInterface, volume, bucket string) *ServiceTarget {
	return &ServiceTarget{
		NS:        remoteNamespace{C: stratov1.NewNamespaceServiceClient(conn)},
		Datanodes: remoteDatanodes{C: stratov1.NewDatanodeServiceClient(conn)},
		Volume:    volume, Bucket: bucket,
	}
}

func (r remoteNamespace) CreateVolume(ctx context.Context, q *stratov1.CreateVolumeRequest) (*stratov1.CreateVolumeResponse, error) {
	return r.C.CreateVolume(ctx, q)
}
func (r remoteNamespace) CreateBucket(ctx context.Context, q *stratov1.CreateBucketRequest) (*stratov1.CreateBucketResponse, error) {
	return r.C.CreateBucket(ctx, q)
}
func (r remoteNamespace) CreateFile(ctx context.Context, q *stratov1.CreateFileRequest) (*stratov1.OpenKeyResponse, error) {
	return r.C.CreateFile(ctx, q)
}
func (r remoteNamespace) AllocateBlock(ctx context.Context, q *stratov1.AllocateBlockRequest) (*stratov1.AllocateBlockResponse, error) {
	return r.C.AllocateBlock(ctx, q)
}
func (r remoteNamespace) CommitKey(ctx context.Context, q *stratov1.CommitKeyRequest) (*stratov1.CommitKeyResponse, error) {
	return r.C.CommitKey(ctx, q)
}
func (r remoteNamespace) CreateDirectory(ctx context.Context, q *stratov1.CreateDirectoryRequest) (*stratov1.CreateDirectoryResponse, error) {
	return r.C.CreateDirectory(ctx, q)
}
func (r remoteNamespace) LookupKey(ctx context.Context, q *stratov1.LookupKeyRequest) (*stratov1.LookupKeyResponse, error) {
	return r.C.LookupKey(ctx, q)
}
func (r remoteNamespace) GetFileStatus(ctx context.Context, q *stratov1.GetFileStatusRequest) (*stratov1.GetFileStatusResponse, error) {
	return r.C.GetFileStatus(ctx, q)
}
func (r remoteNamespace) Delete(ctx context.Context, q *stratov1.DeleteRequest) (*stratov1.DeleteResponse, error) {
	return r.C.Delete(ctx, q)
}
func (r remoteNamespace) Rename(ctx context.Context, q *stratov1.RenameRequest) (*stratov1.RenameResponse, error) {
	return r.C.Rename(ctx, q)
}

// remoteDatanodes adapts a DatanodeService client to the server interface.
type remoteDatanodes struct {
	stratov1.UnimplementedDatanodeServiceServer
	C stratov1.DatanodeServiceClient
}

func (r remoteDatanodes) Register(ctx context.Context, q *stratov1.RegisterRequest) (*stratov1.RegisterResponse, error) {
	return r.C.Register(ctx, q)
}
func (r remoteDatanodes) Heartbeat(ctx context.Context, q *stratov1.HeartbeatRequest) (*stratov1.HeartbeatResponse, error) {
	return r.C.Heartbeat(ctx, q)
}

// isNotFound recognises meta's not-found errors (the benchmark tolerates
// deleting what is already gone).
func isNotFound(err error) bool { return errors.Is(client.Classify(err), client.ErrNotFound) }
