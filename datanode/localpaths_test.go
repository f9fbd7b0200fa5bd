package datanode

import (
	"net"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/strato-io/strato/wire"
)

// TestReadLocalPaths: a client on the datanode's host (a loopback peer) is
// told the paths of a range's files, in one file or in many
// (FILE_PER_CHUNK), and reads the range from them verified; a datanode
// without local reads refuses, as it refuses peers of other hosts.
func TestReadLocalPaths(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("local reads need Linux")
	}
	n := startNode(t, nodeConfig{server: ServerOptions{LocalReads: true}})
	c, data := n.filePerChunkBlock(t, 21)
	writeBlock(t, c, bid(1, 1), data, 30000, nil, false)

	ctx := t.Context()
	for _, b := range []wire.BlockID{bid(21, 1), bid(1, 1)} {
		for _, rg := range [][2]int{{0, len(data)}, {29000, 32000}, {99999, 1}} {
			resp, err := c.ReadLocalPaths(ctx, &wire.ReadLocalPathsRequest{Block: b, Offset: int64(rg[0]), Length: uint32(rg[1])})
			require.NoError(t, err)
			rl, err := resp.Open()
			require.NoError(t, err)
			got := make([]byte, rl.End()-rl.Offset())
			require.NoError(t, rl.ReadInto(got))
			rl.Close()
			start := rg[0] - int(resp.Extents[0].Chunk.Offset)
			require.Equal(t, data[rg[0]:rg[0]+rg[1]], got[start:start+rg[1]], "block %v range %v", b, rg)
			if b.ContainerID == 21 && rg[1] == len(data) {
				require.Len(t, resp.Files, 4, "a file per chunk")
			}
		}
	}
	// The server counts a read once its response is out: the client may see
	// the response first.
	require.Eventually(t, func() bool { return n.srv.Metrics().LocalReads == 6 }, 5*time.Second, time.Millisecond)

	_, err := c.ReadLocalPaths(ctx, &wire.ReadLocalPathsRequest{Block: bid(1, 2), Length: 1})
	requireCode(t, err, wire.CodeBlockNotFound)

	off := startNode(t, nodeConfig{})
	oc := off.dial(t)
	writeBlock(t, oc, bid(1, 1), data, 30000, nil, false)
	_, err = oc.ReadLocalPaths(ctx, &wire.ReadLocalPathsRequest{Block: bid(1, 1), Length: 1})
	requireCode(t, err, wire.CodeUnsupportedType)
}

// TestLoopbackPeers: only loopback TCP peers count as this host's.
func TestLoopbackPeers(t *testing.T) {
	for a, want := range map[net.Addr]bool{
		&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 1}: true,
		&net.TCPAddr{IP: net.IPv4(127, 9, 8, 7), Port: 1}: true,
		&net.TCPAddr{IP: net.IPv6loopback, Port: 1}:       true,
		&net.TCPAddr{IP: net.IPv4(10, 0, 0, 1), Port: 1}:  false,
		&net.TCPAddr{IP: net.ParseIP("fe80::1"), Port: 1}: false,
		&net.UnixAddr{Name: "@x", Net: "unix"}:            false,
	} {
		require.Equal(t, want, loopback(a), "%v", a)
	}
}
