package namespace

import (
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/strato-io/strato/proto/strato/v1"
)

// s3List is the reference: S3 ListObjects over a sorted set of keys.
func s3List(keys []string, prefix, after, delim string) []string {
	var out []string
	seen := map[string]bool{}
	for _, k := range keys {
		if !strings.HasPrefix(k, prefix) {
			continue
		}
		item := k
		if delim != "" {
			if i := strings.Index(k[len(prefix):], delim); i >= 0 {
				item = k[:len(prefix)+i+1]
			}
		}
		if item <= after || seen[item] {
			continue
		}
		seen[item] = true
		out = append(out, item)
	}
	return out
}

func listAll(t require.TestingT, h *harness, bucket, prefix, after, delim string, limit int32) []string {
	var out []string
	for i := 0; ; i++ {
		res, err := h.rd().ListKeys(&stratov1.ListKeysRequest{Volume: "vol", Bucket: bucket, Prefix: prefix, StartAfter: after, Delimiter: delim, Limit: limit})
		require.NoError(t, err)
		// Keys and prefixes of a page interleave in order.
		page := append([]string{}, res.CommonPrefixes...)
		for _, k := range res.Keys {
			page = append(page, k.Name)
		}
		sort.Strings(page)
		out = append(out, page...)
		if !res.Truncated {
			return out
		}
		require.NotEmpty(t, page)
		require.Equal(t, page[len(page)-1], res.NextStartAfter)
		after = res.NextStartAfter
		require.Less(t, i, 1000)
	}
}

func TestListKeysFSO(t *testing.T) {
	h := newHarness(t)
	h.volBucket("fsb", fso)
	files := []string{"a!", "a-b/x", "a/y", "a/z/w", "a.b", "a0/q", "b", "a-b/a/b"}
	for _, f := range files {
		h.createFile("fsb", f, 1)
	}
	h.must(&stratov1.CreateDirectoryRequest{Volume: "vol", Bucket: "fsb", Path: "empty/dir"})
	sorted := append([]string{}, files...)
	sort.Strings(sorted)
	require.Equal(t, sorted, listAll(t, h, "fsb", "", "", "", 0))
	require.Equal(t, sorted, listAll(t, h, "fsb", "", "", "", 1))
	// Directories are common prefixes, even empty ones.
	require.Equal(t, []string{"a!", "a-b/", "a.b", "a/", "a0/", "b", "empty/"}, listAll(t, h, "fsb", "", "", "/", 0))
	require.Equal(t, []string{"a/y", "a/z/"}, listAll(t, h, "fsb", "a/", "", "/", 0))
	require.Equal(t, []string{"a/y", "a/z/w", "a0/q"}, listAll(t, h, "fsb", "a", "a.b", "", 1))
	require.Equal(t, []string{"a-b/x", "a.b", "a/y", "a/z/w", "a0/q"}, listAll(t, h, "fsb", "a", "a-b/a/b", "", 2))
	require.Empty(t, listAll(t, h, "fsb", "nope/", "", "", 0))
	require.Empty(t, listAll(t, h, "fsb", "b/", "", "", 0), "a file is not a directory")
	_, err := h.rd().ListKeys(&stratov1.ListKeysRequest{Volume: "vol", Bucket: "fsb", Delimiter: "-"})
	require.ErrorIs(t, err, ErrInvalid)
}

// TestListKeysFSOOracle compares FSO listings with the S3 reference on
// random trees of names chosen to collide in order ("a" < "a-b" but
// "a-b/" < "a/").
func TestListKeysFSOOracle(t *testing.T) {
	moreChecks(t, 300)
	names := []string{"a", "a-b", "a.b", "a!", "a0", "b", "ab"}
	rapid.Check(t, func(rt *rapid.T) {
		h := newHarnessOn(rt, openDB(t))
		h.volBucket("fsb", fso)
		set := map[string]bool{}
		n := rapid.IntRange(1, 25).Draw(rt, "files")
		for range n {
			depth := rapid.IntRange(1, 3).Draw(rt, "depth")
			parts := make([]string, depth)
			for i := range parts {
				parts[i] = rapid.SampledFrom(names).Draw(rt, "name")
			}
			p := strings.Join(parts, "/")
			if _, err := h.do(&stratov1.CreateFileRequest{Volume: "vol", Bucket: "fsb", Path: p, Overwrite: true, Recursive: true}); err != nil {
				continue // a file is in the way of a directory, or the reverse
			}
			set[p] = true
			h.commitBlocks("fsb", p, h.lastOpen(rt))
		}
		var keys []string
		for k := range set {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		delim := rapid.SampledFrom([]string{"", "/"}).Draw(rt, "delim")
		prefix := rapid.SampledFrom([]string{"", "a", "a/", "a-b/", "a/a", "b/", "a!/a"}).Draw(rt, "prefix")
		after := ""
		if rapid.Bool().Draw(rt, "after?") {
			after = rapid.SampledFrom(append(keys, "a", "a-", "a/", "a-b/", "a/a-b/", "a0/")).Draw(rt, "after")
		}
		limit := int32(rapid.IntRange(1, 5).Draw(rt, "limit"))
		want := s3List(keys, prefix, after, delim)
		got := listAll(rt, h, "fsb", prefix, after, delim, limit)
		if strings.Join(want, " ") != strings.Join(got, " ") {
			rt.Fatalf("prefix %q after %q delim %q limit %d:\n got %q\nwant %q", prefix, after, delim, limit, got, want)
		}
	})
}
