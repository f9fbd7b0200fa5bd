package namespace

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/strato-io/strato/proto/strato/v1"
)

// summarizeAll adds up ContentSummary's pages of path, limit entries a
// page.
func summarizeAll(t require.TestingT, h *harness, bucket, path string, limit int32) (*stratov1.GetContentSummaryResponse, int) {
	sum := &stratov1.GetContentSummaryResponse{}
	var cursor []byte
	for pages := 1; ; pages++ {
		res, err := h.rd().ContentSummary(&stratov1.GetContentSummaryRequest{Volume: "vol", Bucket: bucket, Path: path, Cursor: cursor, Limit: limit})
		require.NoError(t, err)
		sum.DirectoryCount += res.DirectoryCount
		sum.FileCount += res.FileCount
		sum.Length += res.Length
		sum.SpaceConsumed += res.SpaceConsumed
		if len(res.Cursor) == 0 {
			return sum, pages
		}
		require.Less(t, pages, 10000)
		cursor = res.Cursor
	}
}

// TestContentSummaryOracle: a random tree of directories and files of an
// FSO bucket, and keys of an OBS one, summed by meta in pages of 1 to 6
// entries and whole, against the sums of the model: files, bytes, bytes
// on disk (three replicas), directories (each counting itself).
func TestContentSummaryOracle(t *testing.T) {
	moreChecks(t, 200)
	names := []string{"a", "b", "c", "a-b", "d0"}
	rapid.Check(t, func(rt *rapid.T) {
		h := newHarnessOn(rt, openDB(t))
		h.volBucket("fsb", fso)
		h.volBucket("obs", stratov1.BucketLayout_LAYOUT_OBS)
		files := map[string]int64{}
		dirs := map[string]bool{"": true}
		for range rapid.IntRange(0, 30).Draw(rt, "entries") {
			parts := make([]string, rapid.IntRange(1, 4).Draw(rt, "depth"))
			for i := range parts {
				parts[i] = rapid.SampledFrom(names).Draw(rt, "name")
			}
			p := strings.Join(parts, "/")
			if rapid.Bool().Draw(rt, "dir?") {
				if _, err := h.do(&stratov1.CreateDirectoryRequest{Volume: "vol", Bucket: "fsb", Path: p}); err != nil {
					continue // a file in the way
				}
			} else {
				if _, err := h.do(&stratov1.CreateFileRequest{Volume: "vol", Bucket: "fsb", Path: p, Overwrite: true, Recursive: true}); err != nil {
					continue
				}
				lengths := make([]int64, rapid.IntRange(0, 3).Draw(rt, "blocks"))
				files[p] = 0 // an overwrite replaces the file
				for i := range lengths {
					lengths[i] = int64(rapid.IntRange(1, 1000).Draw(rt, "length"))
					files[p] += lengths[i]
				}
				h.commitBlocks("fsb", p, h.lastOpen(rt), lengths...)
				parts = parts[:len(parts)-1]
			}
			for i := range parts {
				dirs[strings.Join(parts[:i+1], "/")] = true
			}
		}
		under := func(p, root string) bool { return root == "" || p == root || strings.HasPrefix(p, root+"/") }
		root := rapid.SampledFrom([]string{"", "a", "b", "a/b", "a/a"}).Draw(rt, "root")
		if _, isFile := files[root]; !dirs[root] && !isFile {
			_, err := h.rd().ContentSummary(&stratov1.GetContentSummaryRequest{Volume: "vol", Bucket: "fsb", Path: root})
			if !errors.Is(err, ErrFileNotFound) && !errors.Is(err, ErrNotADirectory) {
				rt.Fatalf("summary of %q, which is not there: %v", root, err)
			}
			return
		}
		want := &stratov1.GetContentSummaryResponse{}
		for p, n := range files {
			if under(p, root) {
				want.FileCount++
				want.Length += n
				want.SpaceConsumed += 3 * n
			}
		}
		for d := range dirs {
			if under(d, root) && dirs[d] {
				want.DirectoryCount++
			}
		}
		limit := int32(rapid.IntRange(0, 6).Draw(rt, "limit"))
		got, pages := summarizeAll(rt, h, "fsb", root, limit)
		require.Equal(rt, want.String(), got.String(), "root %q limit %d pages %d", root, limit, pages)

		// OBS: the keys under a prefix.
		keys := map[string]int64{}
		for i := range rapid.IntRange(0, 8).Draw(rt, "keys") {
			k := rapid.SampledFrom([]string{"x/1", "x/2", "y", "x/z/3", "xy"}).Draw(rt, "key")
			n := int64(i + 1)
			h.putKey("obs", k, n)
			keys[k] = n
		}
		prefix := rapid.SampledFrom([]string{"", "x/", "x"}).Draw(rt, "prefix")
		wantObs := &stratov1.GetContentSummaryResponse{DirectoryCount: 1}
		for k, n := range keys {
			if strings.HasPrefix(k, prefix) {
				wantObs.FileCount++
				wantObs.Length += n
				wantObs.SpaceConsumed += 3 * n
			}
		}
		gotObs, _ := summarizeAll(rt, h, "obs", prefix, limit)
		require.Equal(rt, wantObs.String(), gotObs.String(), "prefix %q", prefix)
	})
}

// TestContentSummaryCursorChecked: a cursor of another bucket is refused.
func TestContentSummaryCursorChecked(t *testing.T) {
	h := newHarness(t)
	h.volBucket("bk1", fso)
	h.volBucket("bk2", fso)
	for _, p := range []string{"d/f1", "d/f2", "d/e/f3"} {
		h.createFile("bk1", p, 10)
	}
	res, err := h.rd().ContentSummary(&stratov1.GetContentSummaryRequest{Volume: "vol", Bucket: "bk1", Limit: 1})
	require.NoError(t, err)
	require.NotEmpty(t, res.Cursor)
	_, err = h.rd().ContentSummary(&stratov1.GetContentSummaryRequest{Volume: "vol", Bucket: "bk2", Cursor: res.Cursor})
	require.ErrorIs(t, err, ErrInvalid)
	_, err = h.rd().ContentSummary(&stratov1.GetContentSummaryRequest{Volume: "vol", Bucket: "bk1", Cursor: []byte("junk")})
	require.ErrorIs(t, err, ErrInvalid)
	got, pages := summarizeAll(t, h, "bk1", "d", 1)
	require.Equal(t, int64(3), got.FileCount)
	require.Equal(t, int64(2), got.DirectoryCount)
	require.Equal(t, int64(30), got.Length)
	require.Greater(t, pages, 3)
}
