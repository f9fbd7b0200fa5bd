package bench

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"google.golang.org/grpc"

	"github.com/strato-io/strato/client"
	"github.com/strato-io/strato/proto/stratopb"
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
// RemoteNamespace/RemoteCluster over a connection.
type ServiceTarget struct {
	NS      stratopb.NamespaceServer
	Cluster stratopb.ClusterServer
	Admin   ClusterAdmin // nil when remote
	Volume  string
	Bucket  string
	// NoDeferredCreate makes every create open its key through Raft (two
	// entries per create and close, as before deferred creates).
	NoDeferredCreate bool

	reports sync.Map // datanode ID + state → prebuilt *stratopb.HeartbeatRequest
}

// Setup creates the benchmark's volume and FSO bucket if they are missing.
func (t *ServiceTarget) Setup(ctx context.Context, replication int) error {
	if _, err := t.NS.CreateVolume(ctx, &stratopb.CreateVolumeRequest{Name: t.Volume}); err != nil && !errors.Is(client.Classify(err), client.ErrExists) {
		return fmt.Errorf("creating volume %s: %w", t.Volume, err)
	}
	_, err := t.NS.CreateBucket(ctx, &stratopb.CreateBucketRequest{Volume: t.Volume, Name: t.Bucket,
		Layout: stratopb.BucketLayout_LAYOUT_FSO, Replication: stratopb.ReplicationFactor(replication)})
	if err != nil && !errors.Is(client.Classify(err), client.ErrExists) {
		return fmt.Errorf("creating bucket %s/%s: %w", t.Volume, t.Bucket, err)
	}
	return nil
}

func rel(p string) string { return strings.TrimPrefix(p, "/") }

func (t *ServiceTarget) Create(ctx context.Context, path string, willComplete bool) (CreateHandle, error) {
	r, err := t.NS.CreateFile(ctx, &stratopb.CreateFileRequest{Volume: t.Volume, Bucket: t.Bucket, Path: rel(path), Overwrite: true, Recursive: true,
		Deferrable: willComplete && !t.NoDeferredCreate})
	if err != nil {
		return CreateHandle{}, err
	}
	return CreateHandle{Path: path, ID: r.OpenId, Token: r.CreateToken}, nil
}

func (t *ServiceTarget) Complete(ctx context.Context, h CreateHandle) error {
	_, err := t.NS.CommitKey(ctx, &stratopb.CommitKeyRequest{Volume: t.Volume, Bucket: t.Bucket, Key: rel(h.Path), OpenId: h.ID,
		CreateToken: h.Token})
	return err
}

func (t *ServiceTarget) Mkdirs(ctx context.Context, path string) error {
	_, err := t.NS.CreateDirectory(ctx, &stratopb.CreateDirectoryRequest{Volume: t.Volume, Bucket: t.Bucket, Path: rel(path)})
	return err
}

func (t *ServiceTarget) Open(ctx context.Context, path string) error {
	_, err := t.NS.LookupKey(ctx, &stratopb.LookupKeyRequest{Volume: t.Volume, Bucket: t.Bucket, Key: rel(path)})
	return err
}

func (t *ServiceTarget) FileStatus(ctx context.Context, path string) error {
	_, err := t.NS.GetFileStatus(ctx, &stratopb.GetFileStatusRequest{Volume: t.Volume, Bucket: t.Bucket, Path: rel(path)})
	return err
}

func (t *ServiceTarget) Delete(ctx context.Context, path string, recursive bool) error {
	_, err := t.NS.Delete(ctx, &stratopb.DeleteRequest{Volume: t.Volume, Bucket: t.Bucket, Path: rel(path), Recursive: recursive})
	return err
}

func (t *ServiceTarget) Rename(ctx context.Context, src, dst string) error {
	_, err := t.NS.Rename(ctx, &stratopb.RenameRequest{Volume: t.Volume, Bucket: t.Bucket, Src: rel(src), Dst: rel(dst)})
	return err
}

func (t *ServiceTarget) Exists(ctx context.Context, path string) (bool, error) {
	err := t.FileStatus(ctx, path)
	if isNotFound(err) {
		return false, nil
	}
	return err == nil, err
}

func (t *ServiceTarget) RegisterDatanode(ctx context.Context, dn SimDatanode) error {
	_, err := t.Cluster.Register(ctx, &stratopb.RegisterRequest{
		Details: &stratopb.DatanodeDetails{Id: dn.ID, DataAddr: dn.Addr, Hostname: dn.ID},
		Stats:   &stratopb.NodeStats{Capacity: 100 << 40, Remaining: 100 << 40, Volumes: 1},
	})
	return err
}

func (t *ServiceTarget) CreateFileWithBlocks(ctx context.Context, path string, n, replication int) ([]SimBlock, error) {
	r, err := t.NS.CreateFile(ctx, &stratopb.CreateFileRequest{Volume: t.Volume, Bucket: t.Bucket, Path: rel(path), Overwrite: true, Recursive: true,
		SizeHint: 1, Replication: stratopb.ReplicationFactor(replication)})
	if err != nil {
		return nil, err
	}
	blocks := r.Blocks
	for len(blocks) < n {
		a, err := t.NS.AllocateBlock(ctx, &stratopb.AllocateBlockRequest{Volume: t.Volume, Bucket: t.Bucket, Key: rel(path), OpenId: r.OpenId, SizeHint: 1})
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
	_, err = t.NS.CommitKey(ctx, &stratopb.CommitKeyRequest{Volume: t.Volume, Bucket: t.Bucket, Key: rel(path), OpenId: r.OpenId, Blocks: blocks})
	return out, err
}

func (t *ServiceTarget) ContainerReport(ctx context.Context, dn SimDatanode, containers []uint64, closed bool) error {
	// Built once per datanode, as Hadoop's benchmark forms its block reports
	// before timing starts.
	key := fmt.Sprint(dn.ID, closed, len(containers))
	req, ok := t.reports.Load(key)
	if !ok {
		state := stratopb.ContainerState_CONTAINER_OPEN
		if closed {
			state = stratopb.ContainerState_CONTAINER_CLOSED
		}
		rep := &stratopb.ContainerReport{Full: true, Replicas: make([]*stratopb.ContainerReplica, len(containers))}
		for i, c := range containers {
			rep.Replicas[i] = &stratopb.ContainerReplica{ContainerId: c, State: state, UsedBytes: 16, BlockCount: 1}
		}
		req, _ = t.reports.LoadOrStore(key, &stratopb.HeartbeatRequest{DatanodeId: dn.ID, Report: rep})
	}
	_, err := t.Cluster.Heartbeat(ctx, req.(*stratopb.HeartbeatRequest))
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

// RemoteNamespace adapts a Namespace client to the server interface, for
// the calls the benchmark makes.
type RemoteNamespace struct {
	stratopb.UnimplementedNamespaceServer
	C stratopb.NamespaceClient
}

// NewRemote returns a target over a gRPC connection to meta.
func NewRemote(conn grpc.ClientConnInterface, volume, bucket string) *ServiceTarget {
	return &ServiceTarget{
		NS:      RemoteNamespace{C: stratopb.NewNamespaceClient(conn)},
		Cluster: RemoteCluster{C: stratopb.NewClusterClient(conn)},
		Volume:  volume, Bucket: bucket,
	}
}

func (r RemoteNamespace) CreateVolume(ctx context.Context, q *stratopb.CreateVolumeRequest) (*stratopb.CreateVolumeResponse, error) {
	return r.C.CreateVolume(ctx, q)
}
func (r RemoteNamespace) CreateBucket(ctx context.Context, q *stratopb.CreateBucketRequest) (*stratopb.CreateBucketResponse, error) {
	return r.C.CreateBucket(ctx, q)
}
func (r RemoteNamespace) CreateFile(ctx context.Context, q *stratopb.CreateFileRequest) (*stratopb.OpenKeyResponse, error) {
	return r.C.CreateFile(ctx, q)
}
func (r RemoteNamespace) AllocateBlock(ctx context.Context, q *stratopb.AllocateBlockRequest) (*stratopb.AllocateBlockResponse, error) {
	return r.C.AllocateBlock(ctx, q)
}
func (r RemoteNamespace) CommitKey(ctx context.Context, q *stratopb.CommitKeyRequest) (*stratopb.CommitKeyResponse, error) {
	return r.C.CommitKey(ctx, q)
}
func (r RemoteNamespace) CreateDirectory(ctx context.Context, q *stratopb.CreateDirectoryRequest) (*stratopb.CreateDirectoryResponse, error) {
	return r.C.CreateDirectory(ctx, q)
}
func (r RemoteNamespace) LookupKey(ctx context.Context, q *stratopb.LookupKeyRequest) (*stratopb.LookupKeyResponse, error) {
	return r.C.LookupKey(ctx, q)
}
func (r RemoteNamespace) GetFileStatus(ctx context.Context, q *stratopb.GetFileStatusRequest) (*stratopb.GetFileStatusResponse, error) {
	return r.C.GetFileStatus(ctx, q)
}
func (r RemoteNamespace) Delete(ctx context.Context, q *stratopb.DeleteRequest) (*stratopb.DeleteResponse, error) {
	return r.C.Delete(ctx, q)
}
func (r RemoteNamespace) Rename(ctx context.Context, q *stratopb.RenameRequest) (*stratopb.RenameResponse, error) {
	return r.C.Rename(ctx, q)
}

// RemoteCluster adapts a Cluster client to the server interface.
type RemoteCluster struct {
	stratopb.UnimplementedClusterServer
	C stratopb.ClusterClient
}

func (r RemoteCluster) Register(ctx context.Context, q *stratopb.RegisterRequest) (*stratopb.RegisterResponse, error) {
	return r.C.Register(ctx, q)
}
func (r RemoteCluster) Heartbeat(ctx context.Context, q *stratopb.HeartbeatRequest) (*stratopb.HeartbeatResponse, error) {
	return r.C.Heartbeat(ctx, q)
}

// isNotFound recognises meta's not-found errors (the benchmark tolerates
// deleting what is already gone).
func isNotFound(err error) bool { return errors.Is(client.Classify(err), client.ErrNotFound) }
