package backup

import (
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/stretchr/testify/require"
)

// TestRoundTrip writes a backup and reads it back; a damaged, truncated or
// unfinished one is refused.
func TestRoundTrip(t *testing.T) {
	fs := vfs.NewMem()
	w, err := Create(fs, "b")
	require.NoError(t, err)
	want := map[string]string{}
	for i := range 1000 {
		k, v := fmt.Sprintf("k%05d", i), fmt.Sprintf("value %d", i*i)
		require.NoError(t, w.Add([]byte(k), []byte(v)))
		want[k] = v
	}
	require.Error(t, w.Add([]byte("k00000"), nil), "keys in order only")
	m := Manifest{ClusterID: "CID-X", AppliedIndex: 42, AppliedTerm: 3, Members: []Member{{ID: 1, Addr: "a:1", Role: "voter"}},
		ReplicaID: 1, Created: time.Unix(1700000000, 0).UTC(), Version: "test"}
	_, err = w.Finish(m)
	require.NoError(t, err)

	r, err := Open(fs, "b")
	require.NoError(t, err)
	got := map[string]string{}
	require.NoError(t, r.Pairs(func(k, v []byte) error { got[string(k)] = string(v); return nil }))
	require.Equal(t, want, got)
	require.Equal(t, uint64(1000), r.Manifest().Pairs)
	require.Equal(t, "CID-X", r.Manifest().ClusterID)
	require.Equal(t, uint64(42), r.Manifest().AppliedIndex)

	_, err = Create(fs, "b")
	require.ErrorIs(t, err, ErrExists)

	// One byte changed in the state file.
	f, err := fs.OpenReadWrite("b/"+StateFile, vfs.WriteCategoryUnspecified)
	require.NoError(t, err)
	_, err = f.WriteAt([]byte("X"), 100)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	require.ErrorIs(t, r.Pairs(func(k, v []byte) error { return nil }), ErrCorrupt)

	// Truncated.
	src, err := fs.Open("b/" + StateFile)
	require.NoError(t, err)
	data, err := io.ReadAll(src)
	require.NoError(t, err)
	require.NoError(t, src.Close())
	out, err := fs.Create("b/"+StateFile, vfs.WriteCategoryUnspecified)
	require.NoError(t, err)
	_, err = out.Write(data[:len(data)/2])
	require.NoError(t, err)
	require.NoError(t, out.Close())
	require.ErrorIs(t, r.Pairs(func(k, v []byte) error { return nil }), ErrCorrupt)

	// Unfinished: no manifest.
	w, err = Create(fs, "c")
	require.NoError(t, err)
	require.NoError(t, w.Add([]byte("k"), []byte("v")))
	w.Abort()
	_, err = Open(fs, "c")
	require.ErrorIs(t, err, ErrIncomplete)
}
