package datanode

import (
	"context"
	"crypto/tls"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/strato-io/strato/certs"
	"github.com/strato-io/strato/internal/pagecache"
	"github.com/strato-io/strato/wire"
)

// TestPeerReadsDirect: a datanode's READ_CHUNK from another datanode (a
// rebuild's) reads the block file around the page cache, in pieces that
// start and end off the 4 KiB alignment direct I/O needs, and returns the
// same bytes a client's read does; a client's read goes through the page
// cache. On plain TCP and under TLS.
func TestPeerReadsDirect(t *testing.T) {
	for _, secure := range []bool{false, true} {
		name := map[bool]string{false: "tcp", true: "tls"}[secure]
		t.Run(name, func(t *testing.T) {
			var server, client *tls.Config
			if secure {
				server, client = testTLS(t)
			}
			testPeerReadsDirect(t, nodeConfig{tls: server}, wire.ConnOptions{TLS: client})
		})
	}
}

// testTLS returns a datanode's TLS configuration and its clients', from a
// new CA.
func testTLS(t *testing.T) (server, client *tls.Config) {
	t.Helper()
	ca := t.TempDir()
	require.NoError(t, certs.InitCA(ca))
	require.NoError(t, certs.Issue(ca, ca, "dn", []string{"127.0.0.1"}))
	server, err := certs.ServerConfig(filepath.Join(ca, "dn.crt"), filepath.Join(ca, "dn.key"), filepath.Join(ca, certs.CACert))
	require.NoError(t, err)
	client, err = certs.ClientConfig(filepath.Join(ca, certs.CACert), "", "")
	require.NoError(t, err)
	return server, client
}

func testPeerReadsDirect(t *testing.T, cfg nodeConfig, opts wire.ConnOptions) {
	n := startNode(t, cfg)
	dial := func(clientID string) *wire.Conn {
		o := opts
		o.ClientID = clientID
		c, err := wire.Dial(context.Background(), n.addr, o)
		require.NoError(t, err)
		t.Cleanup(func() { _ = c.Close() })
		return c
	}
	c := dial(t.Name())
	blk := bid(1, 1)
	const size = 6<<20 + 12345
	data := pattern(7, 0, size)
	writeBlock(t, c, blk, data, 30000, nil, true) // chunks end off the alignment
	ct, err := n.store.Container(1)
	require.NoError(t, err)
	if !ct.DirectIO() {
		t.Skip("the volume's filesystem has no direct I/O")
	}
	ext, err := ct.Extents(blk.LocalID, 0, size)
	require.NoError(t, err)
	path := ext[0].Path
	for _, e := range ext {
		require.Equal(t, path, e.Path, "one file per block")
	}
	resident := func() int {
		k, err := pagecache.Resident(path)
		require.NoError(t, err)
		return k
	}
	require.NoError(t, pagecache.Evict(path))
	require.Zero(t, resident(), "pages left in the page cache after Evict")

	peer := dial("datanode peer-of-" + t.Name())
	for _, r := range []struct{ off, n int64 }{
		{0, size},                // every byte, more than a piece of copyDirect
		{5000, 100_000},          // starts and ends inside windows and chunks
		{size - 7000, 7000},      // the file's unaligned end
		{4 << 20, 2<<20 + 12345}, // from a piece boundary to the end
	} {
		got := readRange(t, peer, blk, r.off, int(r.n))
		require.Equal(t, data[r.off:r.off+r.n], got, "peer read [%d, +%d)", r.off, r.n)
	}
	require.Zero(t, resident(), "a peer's reads filled the page cache")

	require.Equal(t, data, readRange(t, c, blk, 0, size))
	require.NotZero(t, resident(), "a client's read did not go through the page cache")
}

// TestWriteCache: by default a pipeline's leader writes its copy through
// the page cache (a read soon after finds it there) and its follower
// around it; with NoWriteCache both write around it. Either way the
// replicas hold the bytes written.
func TestWriteCache(t *testing.T) {
	for _, noCache := range []bool{false, true} {
		t.Run(map[bool]string{false: "default", true: "no-write-cache"}[noCache], func(t *testing.T) {
			cfg := nodeConfig{server: ServerOptions{NoWriteCache: noCache}}
			leader, follower := startNode(t, cfg), startNode(t, cfg)
			c, err := wire.Dial(context.Background(), leader.addr, wire.ConnOptions{ClientID: t.Name()})
			require.NoError(t, err)
			t.Cleanup(func() { _ = c.Close() })
			blk := bid(1, 1)
			data := pattern(3, 0, 4<<20)
			writeBlock(t, c, blk, data, 1<<20, []string{follower.addr}, true)

			resident := func(n *node) int {
				ct, err := n.store.Container(1)
				require.NoError(t, err)
				if !ct.DirectIO() {
					t.Skip("the volume's filesystem has no direct I/O")
				}
				ext, err := ct.Extents(blk.LocalID, 0, int64(len(data)))
				require.NoError(t, err)
				k, err := pagecache.Resident(ext[0].Path)
				require.NoError(t, err)
				return k
			}
			leaderPages, followerPages := resident(leader), resident(follower)
			require.Zero(t, followerPages, "the follower's copy went through the page cache")
			if noCache {
				require.Zero(t, leaderPages, "the leader's copy went through the page cache with NoWriteCache")
			} else {
				require.NotZero(t, leaderPages, "the leader's copy is not in the page cache")
			}
			for _, n := range []*node{leader, follower} {
				rc, err := wire.Dial(context.Background(), n.addr, wire.ConnOptions{ClientID: t.Name()})
				require.NoError(t, err)
				require.Equal(t, data, readRange(t, rc, blk, 0, len(data)))
				_ = rc.Close()
			}
		})
	}
}

func TestNoWriteCacheExcludesBufferedIO(t *testing.T) {
	o := Options{Dirs: []string{t.TempDir()}, Meta: []string{"127.0.0.1:1"}, BufferedIO: true, NoWriteCache: true}
	require.ErrorContains(t, o.Validate(), "exclude each other")
}
