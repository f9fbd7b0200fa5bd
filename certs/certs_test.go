package certs

import (
	"crypto/tls"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// newCA makes a CA in a temp dir and a certificate named name, and returns
// the dir.
func newCA(t *testing.T, names ...string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "ca")
	require.NoError(t, InitCA(dir))
	for _, n := range names {
		require.NoError(t, Issue(dir, dir, n, []string{"10.1.2.3", "node1.example"}))
	}
	return dir
}

func TestInitCA(t *testing.T) {
	dir := newCA(t)
	st, err := os.Stat(dir)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o700), st.Mode().Perm())
	st, err = os.Stat(filepath.Join(dir, CAKey))
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), st.Mode().Perm())
	before, err := os.ReadFile(filepath.Join(dir, CACert))
	require.NoError(t, err)

	err = InitCA(dir)
	require.ErrorIs(t, err, ErrExists)
	after, err := os.ReadFile(filepath.Join(dir, CACert))
	require.NoError(t, err)
	require.Equal(t, before, after)
}

func TestIssue(t *testing.T) {
	dir := newCA(t, "node")
	pair, err := tls.LoadX509KeyPair(filepath.Join(dir, "node.crt"), filepath.Join(dir, "node.key"))
	require.NoError(t, err)
	leaf := pair.Leaf
	require.Equal(t, "node", leaf.Subject.CommonName)
	require.ElementsMatch(t, []string{"node1.example", "localhost"}, leaf.DNSNames)
	require.Len(t, leaf.IPAddresses, 2)
	require.NoError(t, leaf.VerifyHostname("10.1.2.3"))
	require.NoError(t, leaf.VerifyHostname("127.0.0.1"))
	require.Less(t, time.Until(leaf.NotAfter), CertValidity+time.Minute)
	st, err := os.Stat(filepath.Join(dir, "node.key"))
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), st.Mode().Perm())

	// Issuing again replaces the pair.
	require.NoError(t, Issue(dir, dir, "node", nil))
	for _, bad := range []string{"", "ca", "../x"} {
		require.Error(t, Issue(dir, dir, bad, nil), bad)
	}
	require.Error(t, Issue(t.TempDir(), dir, "x", nil), "no CA there")
}

// handshake runs a TLS handshake between the two configs over loopback and
// returns the server's view of the connection and the errors of both ends.
func handshake(t *testing.T, server, client *tls.Config) (state tls.ConnectionState, serr, cerr error) {
	t.Helper()
	lis, err := tls.Listen("tcp", "127.0.0.1:0", server)
	require.NoError(t, err)
	defer lis.Close()
	done := make(chan struct{})
	go func() {
		defer close(done)
		c, err := lis.Accept()
		if err != nil {
			serr = err
			return
		}
		defer c.Close()
		tc := c.(*tls.Conn)
		serr = tc.Handshake()
		state = tc.ConnectionState()
		_, _ = c.Write([]byte{1})
	}()
	c, err := tls.Dial("tcp", lis.Addr().String(), client)
	if err == nil {
		// A refused client certificate shows on the first read (TLS 1.3).
		_, err = c.Read(make([]byte, 1))
		_ = c.Close()
	}
	<-done
	return state, serr, err
}

func TestHandshake(t *testing.T) {
	ca := newCA(t, "node", "dn")
	other := newCA(t, "node", "dn")
	server, err := ServerConfig(filepath.Join(ca, "node.crt"), filepath.Join(ca, "node.key"), filepath.Join(ca, CACert))
	require.NoError(t, err)
	pool, err := LoadPool(filepath.Join(ca, CACert))
	require.NoError(t, err)

	t.Run("client without certificate", func(t *testing.T) {
		client, err := ClientConfig(filepath.Join(ca, CACert), "", "")
		require.NoError(t, err)
		state, serr, cerr := handshake(t, server, client)
		require.NoError(t, serr)
		require.NoError(t, cerr)
		require.Error(t, Verified(pool, state))
	})
	t.Run("client with certificate", func(t *testing.T) {
		client, err := ClientConfig(filepath.Join(ca, CACert), filepath.Join(ca, "dn.crt"), filepath.Join(ca, "dn.key"))
		require.NoError(t, err)
		state, serr, cerr := handshake(t, server, client)
		require.NoError(t, serr)
		require.NoError(t, cerr)
		require.NoError(t, Verified(pool, state))
		require.Equal(t, uint16(tls.VersionTLS13), state.Version)
	})
	t.Run("client certificate of another CA", func(t *testing.T) {
		client, err := ClientConfig(filepath.Join(ca, CACert), filepath.Join(other, "dn.crt"), filepath.Join(other, "dn.key"))
		require.NoError(t, err)
		_, serr, cerr := handshake(t, server, client)
		require.ErrorContains(t, serr, "certificate")
		require.Error(t, cerr)
	})
	t.Run("server of another CA", func(t *testing.T) {
		client, err := ClientConfig(filepath.Join(other, CACert), "", "")
		require.NoError(t, err)
		_, _, cerr := handshake(t, server, client)
		require.ErrorContains(t, cerr, "certificate signed by unknown authority")
	})
	t.Run("Verified refuses another CA", func(t *testing.T) {
		lax := server.Clone()
		lax.ClientAuth = tls.RequestClientCert
		client, err := ClientConfig(filepath.Join(ca, CACert), filepath.Join(other, "dn.crt"), filepath.Join(other, "dn.key"))
		require.NoError(t, err)
		state, serr, cerr := handshake(t, lax, client)
		require.NoError(t, serr)
		require.NoError(t, cerr)
		require.ErrorContains(t, Verified(pool, state), "unknown authority")
	})
}

func TestClientConfigErrors(t *testing.T) {
	ca := newCA(t, "dn")
	_, err := ClientConfig(filepath.Join(ca, CACert), filepath.Join(ca, "dn.crt"), "")
	require.Error(t, err)
	_, err = ClientConfig(filepath.Join(ca, "missing"), "", "")
	require.Error(t, err)
	_, err = ClientConfig(filepath.Join(ca, "dn.key"), "", "")
	require.ErrorContains(t, err, "no certificate")
}
