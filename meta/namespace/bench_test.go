package namespace

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/strato-io/strato/proto/strato/v1"
)

// benchHarness is a harness on a Pebble DB in a temporary directory (real
// files, commits without fsync).
func benchHarness(b *testing.B, opts Options) *harness {
	o := &pebble.Options{FormatMajorVersion: pebble.FormatNewest, Logger: quietLogger{}}
	ConfigurePebble(o)
	db, err := pebble.Open(b.TempDir(), o)
	require.NoError(b, err)
	b.Cleanup(func() { db.Close() })
	h := newHarnessOn(b, db)
	h.ns, err = New(opts)
	require.NoError(b, err)
	h.volBucket("fsb", fso)
	return h
}

// step prepares a request and applies it in a batch of its own.
func (h *harness) step(b *testing.B, req proto.Message) proto.Message {
	cmd, err := h.ns.Prepare(context.Background(), req, h.db, h.env())
	if err != nil {
		b.Fatal(err)
	}
	batch := h.db.NewIndexedBatch()
	res, err := h.ns.Apply(cmd, batch)
	if err != nil {
		b.Fatal(err)
	}
	if err := batch.Commit(pebble.NoSync); err != nil {
		b.Fatal(err)
	}
	batch.Close()
	h.ns.Committed()
	return res
}

func benchPath(i int) string {
	return fmt.Sprintf("nnThroughputBenchmark/create/ThroughputBenchDir%d/ThroughputBench%d", i/1000, i)
}

// BenchmarkCreate is NNThroughputBenchmark's "create -close": CreateFile
// (no data, so no block) then CommitKey, each prepared, applied and
// committed (no fsync) on its own.
func BenchmarkCreate(b *testing.B) {
	h := benchHarness(b, Options{})
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		p := benchPath(i)
		open := h.step(b, &stratov1.CreateFileRequest{Volume: "vol", Bucket: "fsb", Path: p, Overwrite: true, Recursive: true}).(*stratov1.OpenKeyResponse)
		h.step(b, &stratov1.CommitKeyRequest{Volume: "vol", Bucket: "fsb", Key: p, OpenId: open.OpenId})
	}
}

// BenchmarkApplyCreateBatched applies create+commit commands 64 to a batch
// (what group commit gives the apply loop): the serial cost per file.
func BenchmarkApplyCreateBatched(b *testing.B) {
	h := benchHarness(b, Options{})
	b.ReportAllocs()
	b.ResetTimer()
	const per = 64
	for i := 0; i < b.N; i += per {
		n := min(per, b.N-i)
		opens := make([]*stratov1.NamespaceCommand, n)
		for j := range n {
			cmd, err := h.ns.Prepare(context.Background(), &stratov1.CreateFileRequest{Volume: "vol", Bucket: "fsb", Path: benchPath(i + j), Overwrite: true, Recursive: true}, h.db, h.env())
			if err != nil {
				b.Fatal(err)
			}
			opens[j] = cmd
		}
		batch := h.db.NewIndexedBatch()
		commits := make([]*stratov1.NamespaceCommand, n)
		for j, cmd := range opens {
			res, err := h.ns.Apply(cmd, batch)
			if err != nil {
				b.Fatal(err)
			}
			commits[j] = &stratov1.NamespaceCommand{NowUnixMs: cmd.NowUnixMs, Op: &stratov1.NamespaceCommand_CommitKey{CommitKey: &stratov1.CommitKeyCommand{
				Volume: "vol", Bucket: "fsb", Key: benchPath(i + j), OpenId: res.(*stratov1.OpenKeyResponse).OpenId}}}
		}
		h.commitBatch(b, batch, commits...)
	}
}

// commitBatch applies cmds into batch, commits it and closes it.
func (h *harness) commitBatch(b *testing.B, batch *pebble.Batch, cmds ...*stratov1.NamespaceCommand) {
	defer batch.Close()
	for _, cmd := range cmds {
		if _, err := h.ns.Apply(cmd, batch); err != nil {
			b.Fatal(err)
		}
	}
	if err := batch.Commit(pebble.NoSync); err != nil {
		b.Fatal(err)
	}
	h.ns.Committed()
}

func BenchmarkMkdirs(b *testing.B) {
	h := benchHarness(b, Options{})
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		h.step(b, &stratov1.CreateDirectoryRequest{Volume: "vol", Bucket: "fsb", Path: fmt.Sprintf("mkdirs/Dir%d/Dir%d", i/1000, i)})
	}
}

// deepTree makes a file at depth 10 and returns its path.
func deepTree(b *testing.B, h *harness) string {
	parts := make([]string, 10)
	for i := range parts {
		parts[i] = fmt.Sprintf("level%d", i)
	}
	p := strings.Join(parts, "/") + "/file"
	open := h.step(b, &stratov1.CreateFileRequest{Volume: "vol", Bucket: "fsb", Path: p, Recursive: true}).(*stratov1.OpenKeyResponse)
	h.step(b, &stratov1.CommitKeyRequest{Volume: "vol", Bucket: "fsb", Key: p, OpenId: open.OpenId})
	// Neighbours, so the tables are not trivially small.
	for i := range 5000 {
		h.step(b, &stratov1.CreateDirectoryRequest{Volume: "vol", Bucket: "fsb", Path: fmt.Sprintf("%s/n%d", strings.Join(parts[:i%10+1], "/"), i)})
	}
	require.NoError(b, h.db.Flush())
	return p
}

// BenchmarkGetFileStatus stats a file 11 components deep, from parallel
// goroutines, with and without the directory cache.
func BenchmarkGetFileStatus(b *testing.B) {
	for _, tc := range []struct {
		name  string
		bytes int64
	}{{"cache", 0}, {"nocache", -1}} {
		b.Run(tc.name, func(b *testing.B) {
			h := benchHarness(b, Options{DirCacheBytes: tc.bytes})
			p := deepTree(b, h)
			rd := h.rd()
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				req := &stratov1.GetFileStatusRequest{Volume: "vol", Bucket: "fsb", Path: p}
				for pb.Next() {
					if _, err := rd.GetFileStatus(req); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}

// BenchmarkLookupKey is NNThroughputBenchmark's "open" (getBlockLocations).
func BenchmarkLookupKey(b *testing.B) {
	h := benchHarness(b, Options{})
	p := deepTree(b, h)
	rd := h.rd()
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		req := &stratov1.LookupKeyRequest{Volume: "vol", Bucket: "fsb", Key: p}
		for pb.Next() {
			if _, err := rd.LookupKey(req); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkListStatus lists a directory of 1000 files and 100 directories,
// a page of 100 at a time.
func BenchmarkListStatus(b *testing.B) {
	h := benchHarness(b, Options{})
	for i := range 1000 {
		p := fmt.Sprintf("list/f%04d", i)
		open := h.step(b, &stratov1.CreateFileRequest{Volume: "vol", Bucket: "fsb", Path: p, Recursive: true}).(*stratov1.OpenKeyResponse)
		h.step(b, &stratov1.CommitKeyRequest{Volume: "vol", Bucket: "fsb", Key: p, OpenId: open.OpenId})
		if i%10 == 0 {
			h.step(b, &stratov1.CreateDirectoryRequest{Volume: "vol", Bucket: "fsb", Path: fmt.Sprintf("list/d%04d", i)})
		}
	}
	require.NoError(b, h.db.Flush())
	rd := h.rd()
	b.ReportAllocs()
	b.ResetTimer()
	entries := 0
	for i := 0; i < b.N; i++ {
		after := ""
		for {
			res, err := rd.ListStatus(&stratov1.ListStatusRequest{Volume: "vol", Bucket: "fsb", Path: "list", StartAfter: after, Limit: 100})
			if err != nil {
				b.Fatal(err)
			}
			entries += len(res.Statuses)
			if !res.Truncated {
				break
			}
			_, after = splitLast(res.Statuses[len(res.Statuses)-1].Path)
		}
	}
	b.ReportMetric(float64(entries)/float64(b.N), "entries/op")
}

// BenchmarkReclaim deletes a tree recursively and reclaims it in steps of
// 1,000 entries (the server's default), as the server does in the
// background: "wide" is one directory of 20,000 files, "dirs" 20,000
// directories of one file each.
func BenchmarkReclaim(b *testing.B) {
	for _, tc := range []struct {
		name string
		path func(i int) string
	}{
		{"wide", func(i int) string { return fmt.Sprintf("t/f%d", i) }},
		{"dirs", func(i int) string { return fmt.Sprintf("t/d%d/f", i) }},
	} {
		b.Run(tc.name, func(b *testing.B) {
			h := benchHarness(b, Options{})
			for range b.N {
				b.StopTimer()
				for i := range 20000 {
					open := h.step(b, &stratov1.CreateFileRequest{Volume: "vol", Bucket: "fsb", Path: tc.path(i), Recursive: true}).(*stratov1.OpenKeyResponse)
					h.step(b, &stratov1.CommitKeyRequest{Volume: "vol", Bucket: "fsb", Key: tc.path(i), OpenId: open.OpenId})
				}
				b.StartTimer()
				h.step(b, &stratov1.DeleteRequest{Volume: "vol", Bucket: "fsb", Path: "t", Recursive: true})
				for {
					cmd, err := h.ns.PrepareReclaim(h.db, h.now, 1000)
					if err != nil {
						b.Fatal(err)
					}
					if cmd == nil {
						break
					}
					h.commitBatch(b, h.db.NewIndexedBatch(), cmd)
				}
			}
		})
	}
}
