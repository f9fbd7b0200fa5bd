package wire

import (
	"net"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// wantBuffer is what the kernel reports for a buffer of SocketBuffer asked
// with setsockopt: double the request, capped at the sysctl's maximum first.
func wantBuffer(t *testing.T, sysctl string) int {
	b, err := os.ReadFile("/proc/sys/net/core/" + sysctl)
	if err != nil {
		t.Skipf("no %s: %v", sysctl, err)
	}
	max, err := strconv.Atoi(strings.TrimSpace(string(b)))
	require.NoError(t, err)
	return 2 * min(SocketBuffer, max)
}

func socketBuffers(t *testing.T, nc net.Conn) (rcv, snd int) {
	raw, err := nc.(*net.TCPConn).SyscallConn()
	require.NoError(t, err)
	require.NoError(t, raw.Control(func(fd uintptr) {
		rcv, err = syscall.GetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF)
		require.NoError(t, err)
		snd, err = syscall.GetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_SNDBUF)
		require.NoError(t, err)
	}))
	return rcv, snd
}

// TestSocketBuffers: a dialed data connection and one a TLS listener
// accepts have SocketBuffer's send and receive buffers, not the kernel's
// small starting ones.
func TestSocketBuffers(t *testing.T) {
	wantRcv, wantSnd := wantBuffer(t, "rmem_max"), wantBuffer(t, "wmem_max")

	s := newToyServer(t, echoHandler)
	c := dial(t, s.addr())
	rcv, snd := socketBuffers(t, c.nc)
	require.Equal(t, wantRcv, rcv, "dialed: receive buffer")
	require.Equal(t, wantSnd, snd, "dialed: send buffer")

	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	tl := NewTLSListener(l, nil)
	peer, err := net.Dial("tcp", l.Addr().String())
	require.NoError(t, err)
	defer peer.Close()
	nc, err := tl.Accept()
	require.NoError(t, err)
	defer nc.Close()
	rcv, snd = socketBuffers(t, nc.(*TLSConn).g.Conn)
	require.Equal(t, wantRcv, rcv, "accepted under TLS: receive buffer")
	require.Equal(t, wantSnd, snd, "accepted under TLS: send buffer")
}
