package teragen

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// expectedTeraGen is what TeraGen writes for rows split among writers: the
// bytes of each part and the data set's checksum.
func expectedTeraGen(rows uint64, writers int) ([][]byte, Checksum) {
	var parts [][]byte
	var sum Checksum
	row := make([]byte, RowSize)
	for _, s := range Splits(rows, writers) {
		var part []byte
		for id := s.FirstRow; id < s.FirstRow+s.Rows; id++ {
			GenerateRow(row, id)
			sum.AddRow(row)
			part = append(part, row...)
		}
		parts = append(parts, part)
	}
	return parts, sum
}

func TestRunLocal(t *testing.T) {
	for _, buffer := range []int{0, 64 << 10} {
		t.Run(fmt.Sprintf("buffer=%d", buffer), func(t *testing.T) {
			root := t.TempDir()
			var out bytes.Buffer
			cfg := Config{Rows: 5003, Path: "/bench/tg", Writers: 3}
			res, err := Run(context.Background(), cfg, LocalFiles{Root: root, BufferSize: buffer}, &out)
			require.NoError(t, err)

			parts, sum := expectedTeraGen(5003, 3)
			for i, want := range parts {
				got, err := os.ReadFile(filepath.Join(root, "bench", "tg", PartName(i)))
				require.NoError(t, err)
				require.True(t, bytes.Equal(want, got), "part %d differs", i)
			}
			require.Equal(t, sum, res.Checksum)
			require.Equal(t, uint64(500300), res.Bytes)

			report := out.String()
			for i, s := range Splits(5003, 3) {
				st := res.Writers[i]
				require.Equal(t, "/bench/tg/"+PartName(i), st.File)
				require.Equal(t, 2*int64(s.Rows), st.WriteCalls)
				require.Equal(t, int64(1), st.HsyncCalls)
				require.Equal(t, int64(1), st.CloseCalls)
				require.LessOrEqual(t, st.WriteTime+st.HsyncTime+st.CloseTime, st.Elapsed)
				require.Contains(t, report, fmt.Sprintf("writer %d: /bench/tg/%s, rows %d (from %d)", i, PartName(i), s.Rows, s.FirstRow))
				require.Contains(t, report, fmt.Sprintf("write.call: %d\n", 2*s.Rows))
			}
			for _, line := range []string{"write.allTime: ", "hsync.call: 1\n", "hsync.allTime: ", "close.call: 1\n", "close.allTime: ", "rows: 5003\n", "bytes: 500300\n", "elapsed: ", "MB/s: "} {
				require.Contains(t, report, line)
			}
			require.True(t, strings.HasSuffix(report, fmt.Sprintf("CHECKSUM=%d\n", sum.Counter())), report)
		})
	}
}

// call is one call a writer made on a recordFile.
type call struct {
	op string // write, hsync, close
	n  int
}

// recordFS is an in-memory FileCreator that records every call, and can
// fail the failAt'th write of the file named fail.
type recordFS struct {
	mu     sync.Mutex
	files  map[string]*recordFile
	fail   string
	failAt int
	block  chan struct{} // if set, Hsync waits for it to close
}

var errInjected = errors.New("injected")

func (fs *recordFS) Create(_ context.Context, name string) (FileWriter, error) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if fs.files == nil {
		fs.files = map[string]*recordFile{}
	}
	f := &recordFile{fs: fs, name: name}
	fs.files[name] = f
	return f, nil
}

type recordFile struct {
	fs    *recordFS
	name  string
	data  []byte
	calls []call
}

func (f *recordFile) Write(p []byte) (int, error) {
	f.calls = append(f.calls, call{"write", len(p)})
	if f.name == f.fs.fail && len(f.calls) == f.fs.failAt {
		return 0, errInjected
	}
	f.data = append(f.data, p...)
	return len(p), nil
}

func (f *recordFile) Hsync() error {
	f.calls = append(f.calls, call{"hsync", 0})
	if f.fs.block != nil {
		<-f.fs.block
	}
	return nil
}

func (f *recordFile) Close() error {
	f.calls = append(f.calls, call{"close", 0})
	return nil
}

// TestRunTeraGenCalls: each writer makes TeraGen's record writer's calls —
// a 10-byte write and a 90-byte write per row, one hsync, one close.
// Without the checksum the rows are the same; the report says it was not
// computed.
func TestRunNoChecksum(t *testing.T) {
	root := t.TempDir()
	var out bytes.Buffer
	res, err := Run(context.Background(), Config{Rows: 2001, Path: "/tg", Writers: 2, NoChecksum: true}, LocalFiles{Root: root}, &out)
	require.NoError(t, err)
	parts, _ := expectedTeraGen(2001, 2)
	for i, want := range parts {
		got, err := os.ReadFile(filepath.Join(root, "tg", PartName(i)))
		require.NoError(t, err)
		require.True(t, bytes.Equal(want, got), "part %d differs", i)
	}
	require.Equal(t, Checksum{}, res.Checksum)
	require.Contains(t, out.String(), "checksum: not computed")
	require.NotContains(t, out.String(), "CHECKSUM=")
}

func TestRunCalls(t *testing.T) {
	fs := &recordFS{}
	res, err := Run(context.Background(), Config{Rows: 2500, Path: "out"}, fs, &bytes.Buffer{})
	require.NoError(t, err)
	require.Len(t, res.Writers, 2, "two writers by default")
	parts, _ := expectedTeraGen(2500, 2)
	require.Len(t, fs.files, 2)
	for i, want := range parts {
		f := fs.files["out/"+PartName(i)]
		require.NotNil(t, f)
		require.Equal(t, want, f.data)
		var calls []call
		for range len(want) / RowSize {
			calls = append(calls, call{"write", KeySize}, call{"write", ValueSize})
		}
		calls = append(calls, call{"hsync", 0}, call{"close", 0})
		require.Equal(t, calls, f.calls)
	}
}

func TestRunWriteError(t *testing.T) {
	fs := &recordFS{fail: "out/" + PartName(1), failAt: 7}
	var out bytes.Buffer
	_, err := Run(context.Background(), Config{Rows: 1e6, Path: "out", Writers: 3}, fs, &out)
	require.ErrorIs(t, err, errInjected)
	require.Contains(t, err.Error(), "write out/part-m-00001")
	require.Empty(t, out.String(), "no report for a failed run")
	for name, f := range fs.files {
		require.Equal(t, call{"close", 0}, f.calls[len(f.calls)-1], "%s not closed", name)
	}
}

func TestRunCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	fs := &recordFS{}
	_, err := Run(ctx, Config{Rows: 1e6, Path: "out"}, fs, &bytes.Buffer{})
	require.ErrorIs(t, err, context.Canceled)
	for _, f := range fs.files {
		require.Equal(t, []call{{"close", 0}}, f.calls)
	}
}

func TestRunProgress(t *testing.T) {
	fs := &recordFS{block: make(chan struct{})}
	var progress syncBuffer
	cfg := Config{Rows: 3000, Path: "out", Writers: 1, Progress: &progress, ProgressInterval: time.Millisecond}
	go func() {
		for !strings.Contains(progress.String(), "teragen: 3000/3000 rows") {
			time.Sleep(time.Millisecond)
		}
		close(fs.block)
	}()
	_, err := Run(context.Background(), cfg, fs, &bytes.Buffer{})
	require.NoError(t, err)
	require.Contains(t, progress.String(), " MB/s\n")
}

func TestRunConfig(t *testing.T) {
	_, err := Run(context.Background(), Config{Rows: 1}, &recordFS{}, &bytes.Buffer{})
	require.ErrorContains(t, err, "no output path")
	_, err = Run(context.Background(), Config{Rows: 1, Path: "x", Writers: -1}, &recordFS{}, &bytes.Buffer{})
	require.ErrorContains(t, err, "at least one writer")
	// No rows: every writer still creates, syncs and closes its file.
	fs := &recordFS{}
	res, err := Run(context.Background(), Config{Path: "x", Writers: 2}, fs, &bytes.Buffer{})
	require.NoError(t, err)
	require.Equal(t, int64(0), res.Checksum.Counter())
	require.Len(t, fs.files, 2)
}

func TestLocalFilesStayUnderRoot(t *testing.T) {
	root := t.TempDir()
	w, err := LocalFiles{Root: filepath.Join(root, "fs")}.Create(context.Background(), "../../a/b")
	require.NoError(t, err)
	_, err = w.Write([]byte("x"))
	require.NoError(t, err)
	require.NoError(t, w.Hsync())
	require.NoError(t, w.Close())
	got, err := os.ReadFile(filepath.Join(root, "fs", "a", "b"))
	require.NoError(t, err)
	require.Equal(t, "x", string(got))
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
