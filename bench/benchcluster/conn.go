package benchcluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"

	"github.com/strato-io/strato/bytesize"
	"github.com/strato-io/strato/client"
	"github.com/strato-io/strato/datanode"
	"github.com/strato-io/strato/meta"
	"github.com/strato-io/strato/minicluster"
	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

// Options say which strato Connect reaches.
type Options struct {
	// Bench names the benchmark ("ockg", "teragen") in the in-process
	// cluster's temporary directory (strato-<Bench>-*) and in the line that
	// says where it runs.
	Bench string
	// Meta is the address of a running meta server. Default: an in-process
	// cluster, started in Dir.
	Meta string
	// Dir is the in-process cluster's directory.
	Dir Dir
	// Log receives the line that says where the in-process cluster runs.
	// Default: nowhere.
	Log io.Writer
	// Datanodes is how many datanodes the in-process cluster runs.
	// Default: 3.
	Datanodes int
	// TLS runs the in-process cluster with TLS (minicluster.Options.TLS),
	// its client trusting the cluster's CA.
	TLS bool
	// Auth runs the in-process cluster with token authentication, and so
	// block tokens (minicluster.Options.Auth), its client presenting the
	// administrator's token.
	Auth bool
	// NoWriteCache runs the in-process cluster's datanodes with every
	// replica written around the page cache (datanode.Options.NoWriteCache).
	NoWriteCache bool
	// WriteCacheBytes bounds each in-process datanode's volume's writes
	// left in the page cache (container.Options.WriteCacheBytes; 0: none).
	WriteCacheBytes int64
}

// Conn is a client of the strato a benchmark runs against, and the
// in-process cluster behind it, if any.
type Conn struct {
	Client *client.Client
	// Meta is the meta server's address.
	Meta string
	// Cluster is the in-process cluster (nil with Options.Meta).
	Cluster *minicluster.Cluster

	release func() error // stops the in-process cluster and removes its directory
}

// Connect returns a client of the meta server at o.Meta or, when o.Meta is
// empty, of an in-process cluster (meta and 3 datanodes on loopback) it
// starts in o.Dir and waits for. Close releases both.
func Connect(ctx context.Context, o Options) (*Conn, error) {
	if o.Log == nil {
		o.Log = io.Discard
	}
	c := &Conn{Meta: o.Meta, release: func() error { return nil }}
	if o.TLS && c.Meta != "" {
		return nil, errors.New("bench: TLS is for the in-process cluster; a running one is reached as it is")
	}
	if o.Auth && c.Meta != "" {
		return nil, errors.New("bench: auth is for the in-process cluster; a running one is reached as it is (with the client's token)")
	}
	if (o.NoWriteCache || o.WriteCacheBytes > 0) && c.Meta != "" {
		return nil, errors.New("bench: no-write-cache and write-cache are for the in-process cluster; a running one's datanodes are started with them")
	}
	if c.Meta == "" {
		dir, remove, err := o.Dir.Make("strato-" + o.Bench + "-")
		if err != nil {
			return nil, err
		}
		if o.Datanodes == 0 {
			o.Datanodes = 3
		}
		mode := ""
		if o.TLS {
			mode = ", TLS"
		}
		if o.Auth {
			mode += ", auth (block tokens)"
		}
		mo := minicluster.Options{Dir: dir, Datanodes: o.Datanodes, TLS: o.TLS, Auth: o.Auth}
		if o.NoWriteCache {
			mode += ", no write cache"
		}
		if o.WriteCacheBytes > 0 {
			mode += ", write cache " + bytesize.Format(o.WriteCacheBytes)
		}
		if o.NoWriteCache || o.WriteCacheBytes > 0 {
			mo.ConfigureDatanode = func(_ int, do *datanode.Options) {
				do.NoWriteCache, do.Store.Volume.WriteCacheBytes = o.NoWriteCache, o.WriteCacheBytes
			}
		}
		fmt.Fprintf(o.Log, "bench %s: starting an in-process cluster (meta + %d datanodes%s) in %s\n", o.Bench, o.Datanodes, mode, dir)
		mc, err := minicluster.Start(ctx, mo)
		if err != nil {
			remove()
			return nil, err
		}
		c.Meta, c.Cluster = mc.MetaAddr(), mc
		c.release = func() error {
			err := mc.Close()
			remove()
			return err
		}
	}
	copts := client.Options{Meta: []string{c.Meta}}
	if c.Cluster != nil {
		copts.TLS = c.Cluster.ClientTLS()
		tok, err := c.Cluster.AdminToken()
		if err != nil {
			_ = c.release()
			return nil, err
		}
		copts.Token = tok // "" without Auth: the client's default
	}
	cl, err := client.New(copts)
	if err != nil {
		_ = c.release()
		return nil, err
	}
	c.Client = cl
	return c, nil
}

// Close closes the client, then stops the in-process cluster and removes
// its temporary directory.
func (c *Conn) Close() error { return errors.Join(c.Client.Close(), c.release()) }

// EnsureBucket creates the volume and the bucket, with the defaults, when
// they are missing.
func (c *Conn) EnsureBucket(ctx context.Context, volume, bucket string) error {
	if _, err := c.Client.GetVolume(ctx, volume); errors.Is(err, client.ErrNotFound) {
		if _, err := c.Client.CreateVolume(ctx, &stratov1.CreateVolumeRequest{Name: volume}); err != nil {
			return err
		}
	} else if err != nil {
		return err
	}
	if _, err := c.Client.GetBucket(ctx, volume, bucket); errors.Is(err, client.ErrNotFound) {
		if _, err := c.Client.CreateBucket(ctx, &stratov1.CreateBucketRequest{Volume: volume, Name: bucket}); err != nil {
			return err
		}
	} else if err != nil {
		return err
	}
	return nil
}

// StartMeta starts a meta server alone in this process, with its data in
// dir and meta.BenchOptions, and waits until it is ready.
func StartMeta(ctx context.Context, dir string, logger *slog.Logger) (*meta.Server, error) {
	o := meta.BenchOptions(dir)
	o.Logger = logger
	srv, err := meta.Open(o)
	if err != nil {
		return nil, err
	}
	if err := srv.WaitReady(ctx); err != nil {
		_ = srv.Close()
		return nil, err
	}
	return srv, nil
}
