package minicluster

import (
	"context"
	"errors"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/strato-io/strato/certs"
	"github.com/strato-io/strato/client"
	"github.com/strato-io/strato/s3"
)

// S3Options configure the S3 gateway a cluster runs (Options.S3,
// Cluster.StartS3).
type S3Options struct {
	// Listen is the gateway's address. Default: 127.0.0.1:0, a free port.
	Listen string
	// Credentials are accepted besides the access keys kept in meta.
	// Default: none.
	Credentials s3.Credentials
	// Token is what the gateway presents to meta. Default: the
	// administrator's token when the cluster authenticates (Options.Auth).
	Token string
	// Gateway tunes the gateway (volume, domain, region, expiries, the
	// access log); its Client, Credentials and Logger are set by the
	// cluster, its TracerProvider too when unset (Options.TracerProvider).
	Gateway s3.Options
}

// s3Server is a running gateway and what it was started with.
type s3Server struct {
	gw       *s3.Gateway
	cl       *client.Client
	srv      *http.Server
	endpoint string
}

// StartS3 starts the cluster's S3 gateway (one at a time) and returns its
// endpoint: http://ADDR, or https://ADDR with a certificate "s3" of the
// cluster's CA (issued once, kept under Options.Dir/tls) when the cluster
// runs with TLS. The gateway stops with Close.
func (c *Cluster) StartS3(ctx context.Context, o S3Options) (endpoint string, err error) {
	c.mu.Lock()
	running := c.s3 != nil
	c.mu.Unlock()
	if running {
		return "", errors.New("minicluster: an S3 gateway runs already")
	}
	if o.Listen == "" {
		o.Listen = "127.0.0.1:0"
	}
	tok := o.Token
	if tok == "" {
		if tok, err = c.AdminToken(); err != nil {
			return "", err
		}
	}
	lis, err := net.Listen("tcp", o.Listen)
	if err != nil {
		return "", err
	}
	s := &s3Server{}
	defer func() {
		if err != nil {
			_ = lis.Close()
			s.close()
		}
	}()
	log := c.opts.Logger.With("node", "s3")
	if s.cl, err = client.New(client.Options{Meta: c.MetaAddrs(), TLS: c.ClientTLS(), Token: tok, NoToken: tok == "",
		Logger: log, Owner: "s3", TracerProvider: c.opts.TracerProvider}); err != nil {
		return "", err
	}
	mc, err := s3.NewMetaCredentials(s3.MetaCredentialsOptions{Client: s.cl})
	if err != nil {
		return "", err
	}
	creds := s3.Credentials(mc)
	if o.Credentials != nil {
		creds = s3.ChainCredentials{o.Credentials, mc}
	}
	g := o.Gateway
	g.Client, g.Credentials, g.Logger = s.cl, creds, log
	if g.TracerProvider == nil {
		g.TracerProvider = c.opts.TracerProvider
	}
	if s.gw, err = s3.New(ctx, g); err != nil {
		return "", err
	}
	s.srv = &http.Server{Handler: s.gw, ReadHeaderTimeout: time.Minute}
	if ca := c.CAFile(); ca != "" {
		dir := filepath.Dir(ca)
		crt, key := filepath.Join(dir, "s3.crt"), filepath.Join(dir, "s3.key")
		if _, err = os.Stat(crt); errors.Is(err, os.ErrNotExist) {
			if err = certs.Issue(dir, dir, "s3", nil); err != nil {
				return "", err
			}
		}
		s.endpoint = "https://" + lis.Addr().String()
		go func() { _ = s.srv.ServeTLS(lis, crt, key) }()
	} else {
		s.endpoint = "http://" + lis.Addr().String()
		go func() { _ = s.srv.Serve(lis) }()
	}
	c.mu.Lock()
	c.s3 = s
	c.mu.Unlock()
	return s.endpoint, nil
}

// S3Endpoint is the endpoint of the cluster's S3 gateway ("" when it runs
// none).
func (c *Cluster) S3Endpoint() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.s3 == nil {
		return ""
	}
	return c.s3.endpoint
}

// S3Gateway is the cluster's S3 gateway (nil when it runs none), for a
// test to serve it on a listener of its own too.
func (c *Cluster) S3Gateway() *s3.Gateway {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.s3 == nil {
		return nil
	}
	return c.s3.gw
}

// close stops what of the gateway was started.
func (s *s3Server) close() {
	if s.srv != nil {
		_ = s.srv.Close()
	}
	if s.gw != nil {
		_ = s.gw.Close()
	}
	if s.cl != nil {
		_ = s.cl.Close()
	}
}
