package client

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"

	"github.com/strato-io/strato/proto/strato/v1"
	"github.com/strato-io/strato/reqid"
	"github.com/strato-io/strato/tracing"
)

// WithRequestID returns ctx carrying request ID id (at most 64 bytes of
// printable ASCII; another is ignored): the calls made with it send it to
// meta, whose audit log records it, and to the datanodes, which log it
// (docs/observability.md, "Request IDs").
func WithRequestID(ctx context.Context, id string) context.Context { return reqid.With(ctx, id) }

// Options configure a Client.
type Options struct {
	// Meta lists the meta replicas' gRPC addresses. Required.
	Meta []string
	// ChunkSize is the size of the chunks a writer sends. Default: 4 MiB.
	ChunkSize int
	// MaxChunksInFlight bounds the chunks a writer has sent and not yet seen
	// acknowledged by every replica (it keeps them buffered until then).
	// A writer's first OwnChunksInFlight are its own; each one beyond takes
	// a slot of SharedWindow while it is in flight. Default: 16.
	MaxChunksInFlight int
	// SharedWindow bounds the bytes of the chunks in flight beyond each
	// writer's first OwnChunksInFlight, over all of the client's writers
	// (in slots of ChunkSize). A chunk goes whole from hop to hop, so a
	// chunk's round trip holds several of its disk writes' times, and a
	// writer with more chunks in flight keeps every replica's disk busy
	// (decision 0113); the shared bound keeps many writers at once from
	// holding that much each. Default: 128 MiB; negative: none (each
	// writer OwnChunksInFlight at most).
	SharedWindow int64
	// AttemptTimeout bounds one attempt of a meta call at one replica; a
	// call whose attempt times out goes to another replica (the same
	// request ID: meta applies a mutation once). Default:
	// DefaultAttemptTimeout (2s); negative: none.
	AttemptTimeout time.Duration
	// DialOptions are added to the meta connections' (e.g. interceptors).
	DialOptions []grpc.DialOption
	// TLS, when set, secures the connections to meta (gRPC) and to the
	// datanodes (data protocol); it must trust the cluster's CA (see
	// certs.ClientConfig). Default: nil, plaintext.
	TLS *tls.Config
	// Token is presented to meta on every call (meta's --auth token;
	// docs/security.md). Default: FindToken's: $STRATO_TOKEN, else the
	// file `strato login` writes (TokenFile); none if neither exists.
	Token string
	// NoToken presents no token, whatever FindToken would find. Default:
	// false.
	NoToken bool
	// Owner is recorded on what the client creates. Default: "strato"
	// without a token; with one, none is sent and meta records the
	// caller (meta --auth token makes the caller the owner anyway, unless
	// it is an administrator naming another).
	Owner string
	// Umask is cleared from the permission of the files and directories
	// the client creates (0666 for a file, 0777 for a directory, unless
	// the call gives one), as HDFS's fs.permissions.umask-mode. Default:
	// 022; negative: clear nothing.
	Umask int
	// DisableLocalReads makes the client read every replica over TCP. By
	// default a replica on a datanode of this host (one whose local
	// socket answers here, docs/wire.md §5.11) is read from the block's
	// files, which the datanode hands over; the bytes are verified all the
	// same. With TLS the local socket speaks TLS, and the datanode's
	// certificate is checked as over TCP; a socket that fails the check is
	// not read from.
	DisableLocalReads bool
	// FollowerReads spreads the read calls to meta (lookups, status,
	// listings: MetaConn.SetFollowerReads) over every meta replica instead
	// of sending them all to the leader; each stays linearizable (a
	// follower serves it after a ReadIndex through the leader), so a read
	// sees every write acknowledged before it, this client's included.
	// Writes go to the leader. Default: false.
	FollowerReads bool
	// Logger. Default: slog.Default().
	Logger *slog.Logger
	// TracerProvider, when set, makes spans of the client's writes
	// ("client.write", from CreateKey to Close) and reads ("client.read",
	// from OpenKey to Close) and of its calls to meta, and sends the trace
	// to meta and the datanodes. Default: nil, no tracing.
	TracerProvider trace.TracerProvider
}

// The write window's defaults (Options.MaxChunksInFlight, SharedWindow).
const (
	DefaultMaxChunksInFlight = 16
	DefaultSharedWindow      = 128 << 20
	// OwnChunksInFlight are the chunks in flight each writer may have
	// without a slot of the shared window.
	OwnChunksInFlight = 4
)

// EnsureDefaults fills in the defaults.
func (o *Options) EnsureDefaults() {
	if o.ChunkSize <= 0 {
		o.ChunkSize = 4 << 20
	}
	if o.MaxChunksInFlight <= 0 {
		o.MaxChunksInFlight = DefaultMaxChunksInFlight
	}
	if o.SharedWindow == 0 {
		o.SharedWindow = DefaultSharedWindow
	}
	if o.AttemptTimeout == 0 {
		o.AttemptTimeout = DefaultAttemptTimeout
	}
	if o.Owner == "" {
		o.Owner = "strato"
	}
	if o.Umask == 0 {
		o.Umask = DefaultUmask
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
}

// Validate reports invalid options.
func (o *Options) Validate() error {
	if len(o.Meta) == 0 {
		return errors.New("client: no meta address given")
	}
	if o.Umask > 0o777 {
		return fmt.Errorf("client: umask %#o (at most 0777)", o.Umask)
	}
	if o.ChunkSize > 32<<20 {
		return fmt.Errorf("client: chunk size %d over the 32 MiB the data protocol allows", o.ChunkSize)
	}
	return nil
}

// Client is strato's client: the namespace through meta, and key data
// through the datanodes. It is safe for concurrent use.
type Client struct {
	opts Options
	meta *MetaConn
	data *dataConns
	// id and seq number the client's mutations: a retry carries the same
	// (id, seq), and meta applies it once.
	id  string
	seq atomic.Uint64
	// bufs are the streaming readers' chunk buffers (reader.go).
	bufs bufPool
	// copyBufs are local copies' buffers of copyBufSize (local.go).
	copyBufs bufPool
	// tracer makes the spans of writes and reads (nil: no tracing).
	tracer trace.Tracer
	// window is the shared window's free slots (Options.SharedWindow).
	window atomic.Int64
}

// idempotent tags ctx with a new request ID: meta applies the calls made
// with it (retries of one logical request) once, and answers the repeats
// with the first reply.
func (c *Client) idempotent(ctx context.Context) context.Context {
	return metadata.AppendToOutgoingContext(ctx, "strato-client", c.id, "strato-request", strconv.FormatUint(c.seq.Add(1), 10))
}

// New returns a client of the cluster whose meta replicas are opts.Meta.
// Connections are made lazily.
func New(opts Options) (*Client, error) {
	defaultOwner := opts.Owner == ""
	opts.EnsureDefaults()
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	dial := append(reqid.DialOptions(), opts.DialOptions...)
	if opts.TracerProvider != nil {
		dial = append(dial, tracing.GRPCClient(opts.TracerProvider))
	}
	if opts.TLS != nil {
		dial = append([]grpc.DialOption{grpc.WithTransportCredentials(credentials.NewTLS(opts.TLS))}, dial...)
	}
	var tok string
	if !opts.NoToken {
		var err error
		if tok, err = FindToken(opts.Token); err != nil {
			return nil, err
		}
	}
	if opts.Token = tok; tok != "" {
		dial = append([]grpc.DialOption{grpc.WithPerRPCCredentials(tokenCredentials(tok))}, dial...)
		if defaultOwner {
			opts.Owner = "" // meta's: the caller
		}
	}
	mc, err := DialMeta(opts.Meta, dial...)
	if err != nil {
		return nil, err
	}
	mc.SetAttemptTimeout(max(opts.AttemptTimeout, 0))
	mc.SetFollowerReads(opts.FollowerReads)
	var id [12]byte
	_, _ = rand.Read(id[:])
	c := &Client{opts: opts, meta: mc, data: newDataConns(opts.TLS, !opts.DisableLocalReads), id: hex.EncodeToString(id[:]),
		bufs: bufPool{size: opts.ChunkSize}, copyBufs: bufPool{size: copyBufSize}}
	if opts.TracerProvider != nil {
		c.tracer = opts.TracerProvider.Tracer("github.com/strato-io/strato/client")
	}
	if opts.SharedWindow > 0 && opts.ChunkSize > 0 {
		c.window.Store(opts.SharedWindow / int64(opts.ChunkSize))
	}
	return c, nil
}

// startSpan starts the span name of an operation on a key, when the
// client traces (else it returns ctx and nil).
func (c *Client) startSpan(ctx context.Context, name, volume, bucket, key string) (context.Context, trace.Span) {
	if c.tracer == nil {
		return ctx, nil
	}
	return c.tracer.Start(ctx, name, trace.WithAttributes(attribute.String("strato.volume", volume),
		attribute.String("strato.bucket", bucket), attribute.String("strato.key", key)))
}

// endSpan ends span (nil: none), with err as its status.
func endSpan(span trace.Span, err error) {
	if span == nil {
		return
	}
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
	}
	span.End()
}

// Meta returns the client's meta connection, for calls this type does not
// wrap (administration, benchmarks).
func (c *Client) Meta() *MetaConn { return c.meta }

// Close closes every connection.
func (c *Client) Close() error {
	return errors.Join(c.data.close(), c.meta.Close())
}

// ns runs fn against the meta leader's Namespace service. Namespace calls
// are retry-safe (RetrySafe): reads, and mutations, which all carry a
// request ID (idempotent).
func ns[T any](ctx context.Context, c *Client, fn func(context.Context, stratov1.NamespaceServiceClient) (T, error)) (T, error) {
	return dataPath(RetrySafe(ctx), c, fn)
}

// Cluster runs fn against the meta leader's cluster services (AdminService,
// DatanodeService).
func Cluster[T any](ctx context.Context, c *Client, fn func(context.Context, ClusterStubs) (T, error)) (T, error) {
	var out T
	err := c.meta.Do(ctx, func(ctx context.Context, _ stratov1.NamespaceServiceClient, cl ClusterStubs) error {
		var err error
		out, err = fn(ctx, cl)
		return err
	})
	return out, err
}

// dataPath runs fn against the meta leader's Namespace service, retried
// at another replica only if ctx is RetrySafe (ns's calls are; the data
// path's reports to meta, CloseContainer and ReportReplica, are not).
func dataPath[T any](ctx context.Context, c *Client, fn func(context.Context, stratov1.NamespaceServiceClient) (T, error)) (T, error) {
	var out T
	err := c.meta.Do(ctx, func(ctx context.Context, n stratov1.NamespaceServiceClient, _ ClusterStubs) error {
		var err error
		out, err = fn(ctx, n)
		return err
	})
	return out, err
}

// CloseContainer asks meta to close a container (a write to it failed,
// or an operator wants it closed); failedDatanode, if not "", names the
// pipeline member that failed, and meta closes the pipeline too.
func (c *Client) CloseContainer(ctx context.Context, id uint64, failedDatanode, reason string) error {
	_, err := dataPath(ctx, c, func(ctx context.Context, n stratov1.NamespaceServiceClient) (*stratov1.CloseContainerResponse, error) {
		return n.CloseContainer(ctx, &stratov1.CloseContainerRequest{ContainerId: id, FailedDatanode: failedDatanode, Reason: reason})
	})
	return err
}

// ---- Volumes and buckets ------------------------------------------------------

// CreateVolume creates a volume owned by the client's owner unless req says
// otherwise.
func (c *Client) CreateVolume(ctx context.Context, req *stratov1.CreateVolumeRequest) (*stratov1.VolumeInfo, error) {
	ctx = c.idempotent(ctx)
	if req.Owner == "" {
		req.Owner = c.opts.Owner
	}
	resp, err := ns(ctx, c, func(ctx context.Context, n stratov1.NamespaceServiceClient) (*stratov1.CreateVolumeResponse, error) {
		return n.CreateVolume(ctx, req)
	})
	return resp.GetVolume(), err
}

// DeleteVolume deletes an empty volume.
func (c *Client) DeleteVolume(ctx context.Context, name string) error {
	ctx = c.idempotent(ctx)
	_, err := ns(ctx, c, func(ctx context.Context, n stratov1.NamespaceServiceClient) (*stratov1.DeleteVolumeResponse, error) {
		return n.DeleteVolume(ctx, &stratov1.DeleteVolumeRequest{Name: name})
	})
	return err
}

// GetVolume returns a volume's record.
func (c *Client) GetVolume(ctx context.Context, name string) (*stratov1.VolumeInfo, error) {
	return ns(ctx, c, func(ctx context.Context, n stratov1.NamespaceServiceClient) (*stratov1.VolumeInfo, error) {
		return n.GetVolume(ctx, &stratov1.GetVolumeRequest{Name: name})
	})
}

// ListVolumes returns every volume whose name starts with prefix.
func (c *Client) ListVolumes(ctx context.Context, prefix string) ([]*stratov1.VolumeInfo, error) {
	var all []*stratov1.VolumeInfo
	after := ""
	for {
		resp, err := ns(ctx, c, func(ctx context.Context, n stratov1.NamespaceServiceClient) (*stratov1.ListVolumesResponse, error) {
			return n.ListVolumes(ctx, &stratov1.ListVolumesRequest{Prefix: prefix, StartAfter: after})
		})
		if err != nil {
			return nil, err
		}
		all = append(all, resp.Volumes...)
		if !resp.Truncated || len(resp.Volumes) == 0 {
			return all, nil
		}
		after = resp.Volumes[len(resp.Volumes)-1].Name
	}
}

// CreateBucket creates a bucket (FSO, replication THREE, CRC32C unless req
// says otherwise).
func (c *Client) CreateBucket(ctx context.Context, req *stratov1.CreateBucketRequest) (*stratov1.BucketInfo, error) {
	ctx = c.idempotent(ctx)
	if req.Owner == "" {
		req.Owner = c.opts.Owner
	}
	resp, err := ns(ctx, c, func(ctx context.Context, n stratov1.NamespaceServiceClient) (*stratov1.CreateBucketResponse, error) {
		return n.CreateBucket(ctx, req)
	})
	return resp.GetBucket(), err
}

// DeleteBucket deletes an empty bucket.
func (c *Client) DeleteBucket(ctx context.Context, volume, name string) error {
	ctx = c.idempotent(ctx)
	_, err := ns(ctx, c, func(ctx context.Context, n stratov1.NamespaceServiceClient) (*stratov1.DeleteBucketResponse, error) {
		return n.DeleteBucket(ctx, &stratov1.DeleteBucketRequest{Volume: volume, Name: name})
	})
	return err
}

// GetBucket returns a bucket's record.
func (c *Client) GetBucket(ctx context.Context, volume, name string) (*stratov1.BucketInfo, error) {
	return ns(ctx, c, func(ctx context.Context, n stratov1.NamespaceServiceClient) (*stratov1.BucketInfo, error) {
		return n.GetBucket(ctx, &stratov1.GetBucketRequest{Volume: volume, Name: name})
	})
}

// ListBuckets returns every bucket of a volume whose name starts with
// prefix.
func (c *Client) ListBuckets(ctx context.Context, volume, prefix string) ([]*stratov1.BucketInfo, error) {
	var all []*stratov1.BucketInfo
	after := ""
	for {
		page, more, err := c.ListBucketsPage(ctx, volume, prefix, after, 0)
		if err != nil {
			return nil, err
		}
		all = append(all, page...)
		if !more || len(page) == 0 {
			return all, nil
		}
		after = page[len(page)-1].Name
	}
}

// ListBucketsPage returns up to limit buckets of volume whose names start
// with prefix, after the name after, and whether more follow.
func (c *Client) ListBucketsPage(ctx context.Context, volume, prefix, after string, limit int) ([]*stratov1.BucketInfo, bool, error) {
	resp, err := ns(ctx, c, func(ctx context.Context, n stratov1.NamespaceServiceClient) (*stratov1.ListBucketsResponse, error) {
		return n.ListBuckets(ctx, &stratov1.ListBucketsRequest{Volume: volume, Prefix: prefix, StartAfter: after, Limit: int32(limit)})
	})
	if err != nil {
		return nil, false, err
	}
	return resp.Buckets, resp.Truncated, nil
}

// ---- Keys ---------------------------------------------------------------------

// LookupKey returns a committed key with its blocks and their locations.
func (c *Client) LookupKey(ctx context.Context, volume, bucket, key string) (*stratov1.KeyInfo, error) {
	return c.LookupKeyVersion(ctx, volume, bucket, key, KeyVersion{})
}

// KeyVersion names a version of an OBS key of a versioned bucket (S3).
type KeyVersion struct {
	// ID is the version's ID ("": the latest version).
	ID string
	// DeleteMarkers: without an ID, a key whose latest version is a
	// delete marker answers with the marker rather than ErrNotFound.
	DeleteMarkers bool
}

// LookupKeyVersion returns a version of a committed key (which may be a
// delete marker: DeleteMarker set, no blocks).
func (c *Client) LookupKeyVersion(ctx context.Context, volume, bucket, key string, v KeyVersion) (*stratov1.KeyInfo, error) {
	resp, err := ns(ctx, c, func(ctx context.Context, n stratov1.NamespaceServiceClient) (*stratov1.LookupKeyResponse, error) {
		return n.LookupKey(ctx, &stratov1.LookupKeyRequest{Volume: volume, Bucket: bucket, Key: key, VersionId: v.ID, DeleteMarkers: v.DeleteMarkers})
	})
	return resp.GetKey(), err
}

// DeleteKeyVersion deletes a version of an OBS key for good, or, with
// versionID "", deletes the key: on a versioned bucket a delete marker
// becomes its latest version. The reply names the version deleted or
// made.
func (c *Client) DeleteKeyVersion(ctx context.Context, volume, bucket, key, versionID string) (*stratov1.DeleteKeyResponse, error) {
	return c.DeleteKeyWith(ctx, &stratov1.DeleteKeyRequest{Volume: volume, Bucket: bucket, Key: key, VersionId: versionID})
}

// DeleteKeyWith deletes a key as req says (a version, bypassing a
// GOVERNANCE retention: see stratov1.DeleteKeyRequest). A version under
// object lock is ErrObjectLocked.
func (c *Client) DeleteKeyWith(ctx context.Context, req *stratov1.DeleteKeyRequest) (*stratov1.DeleteKeyResponse, error) {
	ctx = c.idempotent(ctx)
	return ns(ctx, c, func(ctx context.Context, n stratov1.NamespaceServiceClient) (*stratov1.DeleteKeyResponse, error) {
		return n.DeleteKey(ctx, req)
	})
}

// SetObjectLock changes the S3 object lock of a version of an OBS key (see
// stratov1.SetObjectLockRequest): ErrObjectLocked when its retention may
// not be weakened.
func (c *Client) SetObjectLock(ctx context.Context, req *stratov1.SetObjectLockRequest) (*stratov1.SetObjectLockResponse, error) {
	ctx = c.idempotent(ctx)
	return ns(ctx, c, func(ctx context.Context, n stratov1.NamespaceServiceClient) (*stratov1.SetObjectLockResponse, error) {
		return n.SetObjectLock(ctx, req)
	})
}

// ListKeyVersions returns one page of the versions of an OBS bucket's keys
// (see stratov1.ListKeyVersionsRequest).
func (c *Client) ListKeyVersions(ctx context.Context, req *stratov1.ListKeyVersionsRequest) (*stratov1.ListKeyVersionsResponse, error) {
	return ns(ctx, c, func(ctx context.Context, n stratov1.NamespaceServiceClient) (*stratov1.ListKeyVersionsResponse, error) {
		return n.ListKeyVersions(ctx, req)
	})
}

// DeleteKey deletes a key (on a versioned bucket: a delete marker becomes
// its latest version).
func (c *Client) DeleteKey(ctx context.Context, volume, bucket, key string) error {
	_, err := c.DeleteKeyVersion(ctx, volume, bucket, key, "")
	return err
}

// RenameKey renames a key; the target must not exist.
func (c *Client) RenameKey(ctx context.Context, volume, bucket, from, to string) error {
	ctx = c.idempotent(ctx)
	_, err := ns(ctx, c, func(ctx context.Context, n stratov1.NamespaceServiceClient) (*stratov1.RenameKeyResponse, error) {
		return n.RenameKey(ctx, &stratov1.RenameKeyRequest{Volume: volume, Bucket: bucket, FromKey: from, ToKey: to})
	})
	return err
}

// SetAttributes replaces the attributes of a committed key, or of the
// bucket when key is "". objectID, when not 0, must be the key's
// (ErrKeyReplaced otherwise).
func (c *Client) SetAttributes(ctx context.Context, volume, bucket, key string, objectID uint64, attrs []*stratov1.KeyAttribute) error {
	return c.SetVersionAttributes(ctx, volume, bucket, key, "", objectID, attrs)
}

// SetVersionAttributes is SetAttributes of a version of an OBS key
// (versionID "": the latest).
func (c *Client) SetVersionAttributes(ctx context.Context, volume, bucket, key, versionID string, objectID uint64, attrs []*stratov1.KeyAttribute) error {
	ctx = c.idempotent(ctx)
	_, err := ns(ctx, c, func(ctx context.Context, n stratov1.NamespaceServiceClient) (*stratov1.SetAttributesResponse, error) {
		return n.SetAttributes(ctx, &stratov1.SetAttributesRequest{Volume: volume, Bucket: bucket, Key: key, ObjectId: objectID,
			Attributes: attrs, VersionId: versionID})
	})
	return err
}

// ListKeys returns one page of keys (see stratov1.ListKeysRequest; Volume
// and Bucket must be set).
func (c *Client) ListKeys(ctx context.Context, req *stratov1.ListKeysRequest) (*stratov1.ListKeysResponse, error) {
	return ns(ctx, c, func(ctx context.Context, n stratov1.NamespaceServiceClient) (*stratov1.ListKeysResponse, error) {
		return n.ListKeys(ctx, req)
	})
}

// ---- File system: paths /volume/bucket/dir/file --------------------------------

// Path is a parsed file-system path.
type Path struct {
	Volume, Bucket string
	// Key is the path inside the bucket, without a leading '/' ("" for the
	// bucket's root).
	Key string
}

func (p Path) String() string {
	s := "/" + p.Volume
	if p.Bucket != "" {
		s += "/" + p.Bucket
	}
	if p.Key != "" {
		s += "/" + p.Key
	}
	return s
}

// ErrInvalidPath: a file-system path that does not name a volume and a
// bucket.
var ErrInvalidPath = errors.New("client: invalid path")

// ParsePath splits "/volume/bucket/dir/file" (the leading '/' is optional;
// "o3fs://bucket.volume/dir" style is not accepted). The volume is required;
// minBucket requires the bucket too.
func ParsePath(s string, needBucket bool) (Path, error) {
	t := strings.Trim(s, "/")
	if t == "" {
		return Path{}, fmt.Errorf("%w: %q names no volume", ErrInvalidPath, s)
	}
	parts := strings.SplitN(t, "/", 3)
	p := Path{Volume: parts[0]}
	if len(parts) > 1 {
		p.Bucket = parts[1]
	}
	if len(parts) > 2 {
		p.Key = parts[2]
	}
	if needBucket && p.Bucket == "" {
		return Path{}, fmt.Errorf("%w: %q names no bucket (want /volume/bucket/path)", ErrInvalidPath, s)
	}
	return p, nil
}

func (c *Client) fsPath(s string) (Path, error) { return ParsePath(s, true) }

// DefaultUmask is Options.Umask's default, HDFS's.
const DefaultUmask = 0o022

// masked is perm (def when 0) without the client's umask.
func (c *Client) masked(perm, def uint32) *uint32 {
	if perm == 0 {
		perm = def
	}
	if c.opts.Umask > 0 {
		perm &^= uint32(c.opts.Umask)
	}
	return &perm
}

// Mkdirs creates a directory and its missing parents, with permission 0777
// less the umask.
func (c *Client) Mkdirs(ctx context.Context, path string) error {
	return c.MkdirsPermission(ctx, path, 0o777)
}

// MkdirsPermission creates a directory and its missing parents with
// permission perm (at most 07777) less the umask; the parents it makes get
// it with u+wx, as on HDFS.
func (c *Client) MkdirsPermission(ctx context.Context, path string, perm uint32) error {
	ctx = c.idempotent(ctx)
	p, err := c.fsPath(path)
	if err != nil {
		return err
	}
	_, err = ns(ctx, c, func(ctx context.Context, n stratov1.NamespaceServiceClient) (*stratov1.CreateDirectoryResponse, error) {
		return n.CreateDirectory(ctx, &stratov1.CreateDirectoryRequest{Volume: p.Volume, Bucket: p.Bucket, Path: p.Key, Owner: c.opts.Owner,
			Permission: c.masked(perm, 0o777)})
	})
	return err
}

// SetPermission sets the permission (at most 07777) of a file, a directory
// or a bucket's root (/volume/bucket). Meta stores it and enforces nothing.
func (c *Client) SetPermission(ctx context.Context, path string, perm uint32) error {
	ctx = c.idempotent(ctx)
	p, err := c.fsPath(path)
	if err != nil {
		return err
	}
	_, err = ns(ctx, c, func(ctx context.Context, n stratov1.NamespaceServiceClient) (*stratov1.SetPermissionResponse, error) {
		return n.SetPermission(ctx, &stratov1.SetPermissionRequest{Volume: p.Volume, Bucket: p.Bucket, Path: p.Key, Permission: perm})
	})
	return err
}

// SetOwner sets the owner, the group or both ("" leaves one unchanged) of
// a file, a directory or a bucket's root.
func (c *Client) SetOwner(ctx context.Context, path, owner, group string) error {
	ctx = c.idempotent(ctx)
	p, err := c.fsPath(path)
	if err != nil {
		return err
	}
	_, err = ns(ctx, c, func(ctx context.Context, n stratov1.NamespaceServiceClient) (*stratov1.SetOwnerResponse, error) {
		return n.SetOwner(ctx, &stratov1.SetOwnerRequest{Volume: p.Volume, Bucket: p.Bucket, Path: p.Key, Owner: owner, Group: group})
	})
	return err
}

// SetTimes sets the modification and access times (Unix milliseconds; -1
// leaves one unchanged) of a file, a directory or a bucket's root, as
// Hadoop's setTimes.
func (c *Client) SetTimes(ctx context.Context, path string, mtimeMs, atimeMs int64) error {
	ctx = c.idempotent(ctx)
	p, err := c.fsPath(path)
	if err != nil {
		return err
	}
	_, err = ns(ctx, c, func(ctx context.Context, n stratov1.NamespaceServiceClient) (*stratov1.SetTimesResponse, error) {
		return n.SetTimes(ctx, &stratov1.SetTimesRequest{Volume: p.Volume, Bucket: p.Bucket, Path: p.Key,
			ModificationTimeUnixMs: &mtimeMs, AccessTimeUnixMs: &atimeMs})
	})
	return err
}

// FsStatus returns the cluster's raw capacity, used and remaining bytes
// (every replica counts), what hdfs dfs -df shows.
func (c *Client) FsStatus(ctx context.Context) (*stratov1.FsStatus, error) {
	return ns(ctx, c, func(ctx context.Context, n stratov1.NamespaceServiceClient) (*stratov1.FsStatus, error) {
		return n.GetFsStatus(ctx, &stratov1.GetFsStatusRequest{})
	})
}

// Stat returns the status of a file or directory.
func (c *Client) Stat(ctx context.Context, path string) (*stratov1.FileStatus, error) {
	p, err := c.fsPath(path)
	if err != nil {
		return nil, err
	}
	resp, err := ns(ctx, c, func(ctx context.Context, n stratov1.NamespaceServiceClient) (*stratov1.GetFileStatusResponse, error) {
		return n.GetFileStatus(ctx, &stratov1.GetFileStatusRequest{Volume: p.Volume, Bucket: p.Bucket, Path: p.Key})
	})
	return resp.GetStatus(), err
}

// List returns the entries of a directory, in name order (a file lists as
// itself).
func (c *Client) List(ctx context.Context, path string) ([]*stratov1.FileStatus, error) {
	p, err := c.fsPath(path)
	if err != nil {
		return nil, err
	}
	var all []*stratov1.FileStatus
	after := ""
	for {
		resp, err := ns(ctx, c, func(ctx context.Context, n stratov1.NamespaceServiceClient) (*stratov1.ListStatusResponse, error) {
			return n.ListStatus(ctx, &stratov1.ListStatusRequest{Volume: p.Volume, Bucket: p.Bucket, Path: p.Key, StartAfter: after})
		})
		if err != nil {
			return nil, err
		}
		all = append(all, resp.Statuses...)
		if !resp.Truncated || len(resp.Statuses) == 0 {
			return all, nil
		}
		last := resp.Statuses[len(resp.Statuses)-1].Path
		after = last[strings.LastIndexByte(last, '/')+1:]
	}
}

// Rename renames a file or directory within a bucket (Hadoop semantics:
// onto an existing directory, src moves into it).
func (c *Client) Rename(ctx context.Context, src, dst string) error {
	ctx = c.idempotent(ctx)
	s, err := c.fsPath(src)
	if err != nil {
		return err
	}
	d, err := c.fsPath(dst)
	if err != nil {
		return err
	}
	if s.Volume != d.Volume || s.Bucket != d.Bucket {
		return fmt.Errorf("%w: rename across buckets (%s to %s)", ErrInvalidPath, s, d)
	}
	_, err = ns(ctx, c, func(ctx context.Context, n stratov1.NamespaceServiceClient) (*stratov1.RenameResponse, error) {
		return n.Rename(ctx, &stratov1.RenameRequest{Volume: s.Volume, Bucket: s.Bucket, Src: s.Key, Dst: d.Key})
	})
	return err
}

// Delete deletes a file, or a directory (with its subtree when recursive).
func (c *Client) Delete(ctx context.Context, path string, recursive bool) error {
	ctx = c.idempotent(ctx)
	p, err := c.fsPath(path)
	if err != nil {
		return err
	}
	_, err = ns(ctx, c, func(ctx context.Context, n stratov1.NamespaceServiceClient) (*stratov1.DeleteResponse, error) {
		return n.Delete(ctx, &stratov1.DeleteRequest{Volume: p.Volume, Bucket: p.Bucket, Path: p.Key, Recursive: recursive})
	})
	return err
}
