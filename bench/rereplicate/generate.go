package rereplicate

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/strato-io/strato/bench/gen"
	"github.com/strato-io/strato/minicluster"
	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

// generate stops every datanode, runs gen.Run into their volumes, calls
// whileStopped, starts them again and waits until meta knows every
// replica. It returns the keys.
func generate(ctx context.Context, cfg Config, c *minicluster.Cluster, out io.Writer, whileStopped func() error) ([]string, error) {
	addrs := c.DatanodeAddrs()
	var dns []gen.Datanode
	for i := range addrs {
		dns = append(dns, gen.Datanode{ID: c.Datanode(i).ID(), Dir: c.DatanodeDir(i), Addr: addrs[i]})
	}
	for i := range dns {
		if err := c.StopDatanode(i); err != nil {
			return nil, err
		}
	}
	res, err := gen.Run(ctx, gen.Config{Size: cfg.Size, ContainerSize: cfg.ContainerSize, BlockSize: cfg.BlockSize,
		Datanodes: dns, Volume: "rerepl", Bucket: "data", Progress: cfg.Progress}, c.Meta(), out)
	if err != nil {
		return nil, err
	}
	if err := whileStopped(); err != nil {
		return nil, err
	}
	// Meta saw every datanode die during the generation. Restarted, it
	// waits for their reports (safe mode, a new leader's settle period)
	// instead of copying, as they come back one by one, containers whose
	// other holders have not re-registered yet: those copies made fourth
	// replicas, then deletions, before the loss was even staged.
	for i := range c.MetaAddrs() {
		if err := c.StopMeta(i); err != nil {
			return nil, err
		}
	}
	for i := range c.MetaAddrs() {
		if err := c.StartMeta(i); err != nil {
			return nil, err
		}
	}
	for i := range dns {
		if err := c.StartDatanode(i); err != nil {
			return nil, err
		}
	}
	if err := c.WaitReady(ctx); err != nil {
		return nil, err
	}
	// Every generated container reported by its three holders.
	cl, err := c.Client()
	if err != nil {
		return nil, err
	}
	defer func() { _ = cl.Close() }()
	if err := waitReplicated(ctx, cl, time.Minute); err != nil {
		return nil, err
	}
	var keys []string
	after := ""
	for {
		resp, err := cl.ListKeys(ctx, &stratov1.ListKeysRequest{Volume: "rerepl", Bucket: "data", Prefix: "gen/", StartAfter: after})
		if err != nil {
			return nil, err
		}
		for _, k := range resp.Keys {
			keys = append(keys, k.Name)
		}
		if !resp.Truncated || len(resp.Keys) == 0 {
			break
		}
		after = resp.NextStartAfter
	}
	if len(keys) != res.Keys {
		return nil, fmt.Errorf("bench: %d generated keys listed, %d made", len(keys), res.Keys)
	}
	return keys, nil
}
