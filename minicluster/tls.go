package minicluster

import (
	"crypto/tls"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/strato-io/strato/certs"
)

// TLSDir is the directory under Options.Dir where a cluster with TLS keeps
// its CA (ca.crt, ca.key) and its nodes' certificates (meta1.crt,
// dn1.crt, ...). They are made on the first start and reused after.
const TLSDir = "tls"

// initTLS makes the cluster's CA unless Dir has one, and the clients'
// configuration.
func (c *Cluster) initTLS() error {
	dir := filepath.Join(c.opts.Dir, TLSDir)
	if _, err := os.Stat(filepath.Join(dir, certs.CACert)); errors.Is(err, os.ErrNotExist) {
		if err := certs.InitCA(dir); err != nil {
			return fmt.Errorf("minicluster: %w", err)
		}
	}
	cfg, err := certs.ClientConfig(c.CAFile(), "", "")
	if err != nil {
		return fmt.Errorf("minicluster: %w", err)
	}
	c.clientTLS = cfg
	return nil
}

// CAFile is the path of the cluster CA's certificate, which clients must
// trust; "" for a cluster without TLS.
func (c *Cluster) CAFile() string {
	if !c.opts.TLS {
		return ""
	}
	return filepath.Join(c.opts.Dir, TLSDir, certs.CACert)
}

// ClientTLS is the TLS configuration of a client of the cluster (trusting
// its CA, presenting no certificate); nil for a cluster without TLS.
func (c *Cluster) ClientTLS() *tls.Config {
	if c.clientTLS == nil {
		return nil
	}
	return c.clientTLS.Clone()
}

// nodeTLS returns the server and client configurations of node name (a
// meta replica or a datanode), issuing its certificate on first use.
func (c *Cluster) nodeTLS(name string) (server, client *tls.Config, err error) {
	dir := filepath.Join(c.opts.Dir, TLSDir)
	crt, key := filepath.Join(dir, name+".crt"), filepath.Join(dir, name+".key")
	if _, err := os.Stat(crt); errors.Is(err, os.ErrNotExist) {
		if err := certs.Issue(dir, dir, name, nil); err != nil {
			return nil, nil, fmt.Errorf("minicluster: %w", err)
		}
	}
	if server, err = certs.ServerConfig(crt, key, c.CAFile()); err != nil {
		return nil, nil, fmt.Errorf("minicluster: %w", err)
	}
	if client, err = certs.ClientConfig(c.CAFile(), crt, key); err != nil {
		return nil, nil, fmt.Errorf("minicluster: %w", err)
	}
	return server, client, nil
}

// MetaServerTLS is the server configuration of meta replica i (its
// certificate, for an HTTPS endpoint beside its gRPC); nil for a cluster
// without TLS.
func (c *Cluster) MetaServerTLS(i int) (*tls.Config, error) {
	if !c.opts.TLS {
		return nil, nil
	}
	server, _, err := c.nodeTLS(fmt.Sprintf("meta%d", i+1))
	return server, err
}
