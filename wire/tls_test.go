package wire

import (
	"context"
	"crypto/tls"
	"net"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/strato-io/strato/certs"
)

// TestDialTLS: with ConnOptions.TLS, Dial handshakes before PING, and a
// client that does not trust the server's CA fails with a TLS error.
func TestDialTLS(t *testing.T) {
	ca, other := filepath.Join(t.TempDir(), "ca"), filepath.Join(t.TempDir(), "other")
	require.NoError(t, certs.InitCA(ca))
	require.NoError(t, certs.InitCA(other))
	require.NoError(t, certs.Issue(ca, ca, "dn", nil))
	server, err := certs.ServerConfig(filepath.Join(ca, "dn.crt"), filepath.Join(ca, "dn.key"), filepath.Join(ca, certs.CACert))
	require.NoError(t, err)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	s := serveToy(t, tls.NewListener(l, server), echoHandler)

	good, err := certs.ClientConfig(filepath.Join(ca, certs.CACert), "", "")
	require.NoError(t, err)
	c, err := Dial(context.Background(), s.addr(), ConnOptions{TLS: good})
	require.NoError(t, err)
	defer c.Close()
	_, ok := c.nc.(*tls.Conn)
	require.True(t, ok)
	resp, data, err := c.ReadChunk(context.Background(), &ReadChunkRequest{Block: BlockID{1, 1}, Offset: 8, Length: 4096}, nil)
	require.NoError(t, err)
	require.Equal(t, offsetBytes(8, 4096), data)
	require.Equal(t, int64(8), resp.Offset)

	bad, err := certs.ClientConfig(filepath.Join(other, certs.CACert), "", "")
	require.NoError(t, err)
	_, err = Dial(context.Background(), s.addr(), ConnOptions{TLS: bad})
	require.ErrorContains(t, err, "TLS handshake")
	require.ErrorContains(t, err, "certificate")
}
