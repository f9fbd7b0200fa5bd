package wire

import (
	"context"
	"crypto/tls"
	"net"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/strato-io/strato/certs"
	"github.com/strato-io/strato/checksum"
)

// testTLS makes a CA with a datanode's certificate (for 127.0.0.1 and
// localhost) and returns the datanode's server configuration and that of
// a client that trusts the CA.
func testTLS(t testing.TB) (server, client *tls.Config) {
	t.Helper()
	ca := filepath.Join(t.TempDir(), "ca")
	require.NoError(t, certs.InitCA(ca))
	require.NoError(t, certs.Issue(ca, ca, "dn", nil))
	server, err := certs.ServerConfig(filepath.Join(ca, "dn.crt"), filepath.Join(ca, "dn.key"), filepath.Join(ca, certs.CACert))
	require.NoError(t, err)
	client, err = certs.ClientConfig(filepath.Join(ca, certs.CACert), "", "")
	require.NoError(t, err)
	return server, client
}

// TestDialTLS: with ConnOptions.TLS, Dial handshakes before PING, and a
// client that does not trust the server's CA fails with a TLS error.
func TestDialTLS(t *testing.T) {
	server, good := testTLS(t)
	_, bad := testTLS(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	s := serveToy(t, NewTLSListener(l, server), echoHandler)

	c, err := Dial(context.Background(), s.addr(), ConnOptions{TLS: good})
	require.NoError(t, err)
	defer c.Close()
	_, ok := c.nc.(*TLSConn)
	require.True(t, ok)
	resp, data, err := c.ReadChunk(context.Background(), &ReadChunkRequest{Block: BlockID{1, 1}, Offset: 8, Length: 4096}, nil)
	require.NoError(t, err)
	require.Equal(t, offsetBytes(8, 4096), data)
	require.Equal(t, int64(8), resp.Offset)

	_, err = Dial(context.Background(), s.addr(), ConnOptions{TLS: bad})
	require.ErrorContains(t, err, "TLS handshake")
	require.ErrorContains(t, err, "certificate")
}

// countingListener counts the writes and reads of its connections.
type countingListener struct {
	net.Listener
	writes, reads *atomic.Int64
}

func (l countingListener) Accept() (net.Conn, error) {
	nc, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &countingConn{Conn: nc, writes: l.writes, reads: l.reads}, nil
}

type countingConn struct {
	net.Conn
	writes, reads *atomic.Int64
}

func (c *countingConn) Write(p []byte) (int, error) { c.writes.Add(1); return c.Conn.Write(p) }
func (c *countingConn) Read(p []byte) (int, error)  { c.reads.Add(1); return c.Conn.Read(p) }

// TestTLSGathersFrames: over TLS, a frame of 1 MiB goes out in a couple of
// writes to the connection under TLS, not one per 16 KiB record, and is
// read back in large reads; the bytes arrive intact both ways.
func TestTLSGathersFrames(t *testing.T) {
	server, client := testTLS(t)
	client.ServerName = "127.0.0.1"
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	var sw, sr, cw, cr atomic.Int64
	s := serveToy(t, NewTLSListener(countingListener{Listener: l, writes: &sw, reads: &sr}, server), echoHandler)
	nc, err := net.Dial("tcp", s.addr())
	require.NoError(t, err)
	tc, err := TLSClient(context.Background(), &countingConn{Conn: nc, writes: &cw, reads: &cr}, client)
	require.NoError(t, err)
	c, err := handshake(context.Background(), NewConn(tc, ConnOptions{}), s.addr(), ConnOptions{})
	require.NoError(t, err)
	defer c.Close()

	const frames, size = 8, 1 << 20
	w0, r0 := sw.Load(), cr.Load()
	for i := range frames {
		_, data, err := c.ReadChunk(context.Background(), &ReadChunkRequest{Block: BlockID{1, 1}, Offset: int64(i), Length: size}, nil)
		require.NoError(t, err)
		require.Equal(t, offsetBytes(int64(i), size), data)
	}
	serverWrites, clientReads := sw.Load()-w0, cr.Load()-r0
	t.Logf("%d frames of 1 MiB: %d writes by the server, %d reads by the client", frames, serverWrites, clientReads)
	require.LessOrEqual(t, serverWrites, int64(3*frames), "a frame's 65 records are gathered")
	// Sealed records of 128 KiB: a read for a record's header (and the
	// first bytes of its body), one or more for the rest of it, as it
	// arrives; TLS's records of 16 KiB would take at least 64 a frame.
	require.LessOrEqual(t, clientReads, int64(32*frames), "records are read in large pieces")

	w0 = cw.Load()
	data := offsetBytes(0, size)
	for range frames {
		require.NoError(t, c.WriteChunk(context.Background(), &WriteChunkRequest{Block: BlockID{1, 2},
			Checksums: checksum.Compute(checksum.CRC32C, 512, data)}, data))
	}
	clientWrites := cw.Load() - w0
	t.Logf("%d frames of 1 MiB: %d writes by the client", frames, clientWrites)
	require.LessOrEqual(t, clientWrites, int64(3*frames))
}
