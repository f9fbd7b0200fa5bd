package namespace

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/strato-io/strato/proto/strato/v1"
)

// testAlloc hands out blocks from container 1 on a fixed pipeline, and
// records what it was asked.
type testAlloc struct {
	mu       sync.Mutex
	next     uint64
	calls    int
	excludes []*stratov1.ExcludeList
	fail     error
}

func (a *testAlloc) AllocateBlock(_ context.Context, repl stratov1.ReplicationFactor, e *stratov1.ErasureCodingRecord, _ int64, ex *stratov1.ExcludeList) (*stratov1.BlockRecord, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.calls++
	a.excludes = append(a.excludes, ex)
	if a.fail != nil {
		return nil, a.fail
	}
	a.next++
	p := &stratov1.BlockPipelineRecord{Id: 7}
	n := int(repl)
	if e != nil {
		n = int(e.Data + e.Parity)
	}
	for i := 0; i < n; i++ {
		p.Members = append(p.Members, &stratov1.BlockMemberRecord{Id: string(rune('a' + i)), DataAddr: "127.0.0.1:1"})
	}
	return &stratov1.BlockRecord{BlockId: &stratov1.BlockIDRecord{ContainerId: 1, LocalId: a.next}, Pipeline: p}, nil
}

type quietLogger struct{}

func (quietLogger) Infof(string, ...any)         {}
func (quietLogger) Errorf(string, ...any)        {}
func (quietLogger) Fatalf(f string, args ...any) { panic(fmt.Sprintf(f, args...)) }

func openDB(t testing.TB) *pebble.DB {
	db, err := pebble.Open("", &pebble.Options{FS: vfs.NewMem(), FormatMajorVersion: pebble.FormatNewest, Logger: quietLogger{}})
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	return db
}

// harness runs commands the way the server does: prepare on the DB, apply
// into an indexed batch, commit, Committed.
type harness struct {
	t     tb
	db    *pebble.DB
	ns    *Namespace
	now   time.Time
	alloc *testAlloc
	rand  *rand.ChaCha8 // the leader's source of S3 secrets, seeded
}

// tb is what the harness needs of a *testing.T or a *rapid.T.
type tb interface {
	require.TestingT
	Helper()
}

func newHarness(t testing.TB) *harness { return newHarnessOn(t, openDB(t)) }

func newHarnessOn(t tb, db *pebble.DB) *harness {
	ns, err := New(Options{})
	require.NoError(t, err)
	ns.acache.verify = true
	return &harness{t: t, db: db, ns: ns, now: time.UnixMilli(1_700_000_000_000), alloc: &testAlloc{},
		rand: rand.NewChaCha8([32]byte{1})}
}

func (h *harness) env() PrepareEnv { return PrepareEnv{Now: h.now, Allocator: h.alloc, Rand: h.rand} }

func (h *harness) prepare(req proto.Message) (*stratov1.NamespaceCommand, error) {
	return h.ns.Prepare(context.Background(), req, h.db, h.env())
}

// apply applies cmd in its own batch. A failed apply must leave the batch
// empty.
func (h *harness) apply(cmd *stratov1.NamespaceCommand) (proto.Message, error) {
	h.t.Helper()
	b := h.db.NewIndexedBatch()
	defer b.Close()
	res, err := h.ns.Apply(cmd, b)
	if err != nil {
		require.NotNil(h.t, Class(err), "unclassified error: %v", err)
		require.True(h.t, b.Empty(), "failed apply wrote to the batch: %v", err)
		return nil, err
	}
	require.NoError(h.t, b.Commit(pebble.NoSync))
	h.ns.Committed()
	return res, nil
}

func (h *harness) do(req proto.Message) (proto.Message, error) {
	h.t.Helper()
	cmd, err := h.prepare(req)
	if err != nil {
		return nil, err
	}
	// The command must survive encoding: it goes through the Raft log.
	data, err := proto.Marshal(cmd)
	require.NoError(h.t, err)
	cmd = &stratov1.NamespaceCommand{}
	require.NoError(h.t, proto.Unmarshal(data, cmd))
	return h.apply(cmd)
}

func (h *harness) must(req proto.Message) proto.Message {
	h.t.Helper()
	res, err := h.do(req)
	require.NoError(h.t, err, "%T %v", req, req)
	return res
}

func (h *harness) fails(class error, req proto.Message) error {
	h.t.Helper()
	_, err := h.do(req)
	require.Error(h.t, err, "%T %v", req, req)
	require.ErrorIs(h.t, err, class, "%T %v", req, req)
	return err
}

func (h *harness) rd() *Reader { return h.ns.Reader(h.db) }

// volBucket creates volume "vol" and a bucket of the given layout.
func (h *harness) volBucket(bucket string, layout stratov1.BucketLayout) {
	h.t.Helper()
	if _, err := h.rd().Volume("vol"); err != nil {
		h.must(&stratov1.CreateVolumeRequest{Name: "vol", Owner: "alice"})
	}
	h.must(&stratov1.CreateBucketRequest{Volume: "vol", Name: bucket, Layout: layout})
}

// createFile creates and commits a file of the given block lengths.
func (h *harness) createFile(bucket, path string, lengths ...int64) *stratov1.CommitKeyResponse {
	h.t.Helper()
	open := h.must(&stratov1.CreateFileRequest{Volume: "vol", Bucket: bucket, Path: path, Overwrite: true, Recursive: true}).(*stratov1.OpenKeyResponse)
	return h.commitBlocks(bucket, path, open.OpenId, lengths...)
}

// putKey opens and commits a key with OpenKey semantics.
func (h *harness) putKey(bucket, key string, lengths ...int64) *stratov1.CommitKeyResponse {
	h.t.Helper()
	open := h.must(&stratov1.OpenKeyRequest{Volume: "vol", Bucket: bucket, Key: key}).(*stratov1.OpenKeyResponse)
	return h.commitBlocks(bucket, key, open.OpenId, lengths...)
}

func (h *harness) commitBlocks(bucket, key string, openID uint64, lengths ...int64) *stratov1.CommitKeyResponse {
	h.t.Helper()
	var blocks []*stratov1.BlockLocation
	for _, l := range lengths {
		bl := h.must(&stratov1.AllocateBlockRequest{Volume: "vol", Bucket: bucket, Key: key, OpenId: openID, SizeHint: l}).(*stratov1.AllocateBlockResponse)
		blocks = append(blocks, &stratov1.BlockLocation{BlockId: bl.Block.BlockId, Length: l})
	}
	return h.must(&stratov1.CommitKeyRequest{Volume: "vol", Bucket: bucket, Key: key, OpenId: openID, Blocks: blocks}).(*stratov1.CommitKeyResponse)
}

func (h *harness) stat(bucket, path string) (*stratov1.FileStatus, error) {
	res, err := h.rd().GetFileStatus(&stratov1.GetFileStatusRequest{Volume: "vol", Bucket: bucket, Path: path})
	if err != nil {
		return nil, err
	}
	return res.Status, nil
}

func (h *harness) list(bucket, path string) []string {
	h.t.Helper()
	var names []string
	after := ""
	for {
		res, err := h.rd().ListStatus(&stratov1.ListStatusRequest{Volume: "vol", Bucket: bucket, Path: path, StartAfter: after, Limit: 3})
		require.NoError(h.t, err)
		for _, st := range res.Statuses {
			n := st.Path
			if st.IsDirectory {
				n += "/"
			}
			names = append(names, n)
			_, after = splitLast(st.Path)
		}
		if !res.Truncated {
			return names
		}
	}
}

func (h *harness) usage(bucket string) (bytes, names int64) {
	h.t.Helper()
	bk, err := h.rd().Bucket("vol", bucket)
	require.NoError(h.t, err)
	return bk.UsedBytes, bk.UsedNamespace
}

func (h *harness) deletedBlocks() []*stratov1.DeletedBlocks {
	h.t.Helper()
	d, err := h.rd().DeletedBlocks(0, 1<<20)
	require.NoError(h.t, err)
	return d
}

// reclaimAll runs reclaim commands until nothing is pending.
func (h *harness) reclaimAll(limit int) (steps int) {
	h.t.Helper()
	for {
		cmd, err := h.ns.PrepareReclaim(h.db, h.now, limit)
		require.NoError(h.t, err)
		if cmd == nil {
			return steps
		}
		res, err := h.apply(cmd)
		require.NoError(h.t, err)
		steps++
		require.Less(h.t, steps, 100000)
		_ = res.(*stratov1.ReclaimResult)
	}
}

// dump returns every key and value of the database.
func dump(t require.TestingT, db *pebble.DB) [][2][]byte {
	it, err := db.NewIter(nil)
	require.NoError(t, err)
	defer it.Close()
	var out [][2][]byte
	for ok := it.First(); ok; ok = it.Next() {
		out = append(out, [2][]byte{bytes.Clone(it.Key()), bytes.Clone(it.Value())})
	}
	return out
}

func blockIDs(d []*stratov1.DeletedBlocks) (ids []uint64) {
	for _, e := range d {
		for _, b := range e.Blocks {
			ids = append(ids, b.LocalId)
		}
	}
	return ids
}

// lastOpen returns the handle of the most recently opened key.
func (h *harness) lastOpen(t require.TestingT) uint64 {
	it, err := h.db.NewIter(&pebble.IterOptions{LowerBound: tableKey(nil, tagOpen), UpperBound: prefixEnd(tableKey(nil, tagOpen))})
	require.NoError(t, err)
	defer it.Close()
	require.True(t, it.Last())
	return binary.BigEndian.Uint64(it.Key()[2:])
}
