package netfault

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/strato-io/strato/test/procs"
)

// Proc is one strato process on a host; it can be killed, paused and
// started again on the same data directory.
type Proc = procs.Proc

// ClusterOptions configure a Cluster.
type ClusterOptions struct {
	// Dir holds the data directories and logs. Required.
	Dir string
	// Strato is the strato binary. Required.
	Strato string
	// Helper is the binary run with STRATO_NETFAULT_MODE set (the test
	// binary: see Main). Required.
	Helper string
	// Datanodes is the number of datanode hosts. Default 3.
	Datanodes int
	// Clients is the number of client hosts (c1, c2, ...). Default 2.
	Clients int
}

// Cluster is three meta replicas (hosts m1..m3), datanodes (d1..) and
// client hosts (c1..) plus a control host (ctl) that is never cut off, each
// in its own namespace.
type Cluster struct {
	Net       *Network
	Metas     []*Proc
	Datanodes []*Proc
	MetaAddrs []string
	Clients   []string
	opts      ClusterOptions
}

// MetaPort and DatanodePort are the ports every host uses.
const (
	MetaPort     = 9860
	DatanodePort = 9870
)

// StartCluster makes the network and starts meta and the datanodes.
func StartCluster(o ClusterOptions) (*Cluster, error) {
	if o.Datanodes <= 0 {
		o.Datanodes = 3
	}
	if o.Clients <= 0 {
		o.Clients = 2
	}
	if o.Dir == "" || o.Strato == "" || o.Helper == "" {
		return nil, errors.New("netfault: ClusterOptions needs Dir, Strato and Helper")
	}
	hosts := []string{"ctl", "m1", "m2", "m3"}
	for i := 1; i <= o.Datanodes; i++ {
		hosts = append(hosts, fmt.Sprintf("d%d", i))
	}
	var clients []string
	for i := 1; i <= o.Clients; i++ {
		clients = append(clients, fmt.Sprintf("c%d", i))
	}
	hosts = append(hosts, clients...)
	n, err := NewNetwork(hosts)
	if err != nil {
		return nil, err
	}
	c := &Cluster{Net: n, Clients: clients, opts: o}
	var peers []string
	for i := 1; i <= 3; i++ {
		addr := fmt.Sprintf("%s:%d", n.Addr(fmt.Sprintf("m%d", i)), MetaPort)
		c.MetaAddrs = append(c.MetaAddrs, addr)
		peers = append(peers, fmt.Sprintf("%d=%s", i, addr))
	}
	for i := 1; i <= 3; i++ {
		h := fmt.Sprintf("m%d", i)
		c.Metas = append(c.Metas, &Proc{Name: "meta " + h, Host: h, Command: n.commandOn(h), Bin: o.Strato, Log: filepath.Join(o.Dir, h+".log"),
			Args: []string{"meta", "--auth", "none", "--data", filepath.Join(o.Dir, h), "--id", fmt.Sprint(i), "--listen", c.MetaAddrs[i-1],
				"--peers", strings.Join(peers, ",")}})
	}
	for i := 1; i <= o.Datanodes; i++ {
		h := fmt.Sprintf("d%d", i)
		c.Datanodes = append(c.Datanodes, &Proc{Name: "datanode " + h, Host: h, Command: n.commandOn(h), Bin: o.Strato, Log: filepath.Join(o.Dir, h+".log"),
			Args: []string{"datanode", "--data", filepath.Join(o.Dir, h), "--meta", strings.Join(c.MetaAddrs, ","),
				"--listen", fmt.Sprintf("%s:%d", n.Addr(h), DatanodePort), "--heartbeat-interval", "300ms"}})
	}
	for _, p := range append(copyProcs(c.Metas), c.Datanodes...) {
		if err := p.Start(); err != nil {
			c.Close()
			return nil, err
		}
	}
	return c, nil
}

func copyProcs(ps []*Proc) []*Proc { return append([]*Proc(nil), ps...) }

// Procs returns every server process.
func (c *Cluster) Procs() []*Proc { return append(copyProcs(c.Metas), c.Datanodes...) }

// Crashes lists the server exits the harness did not cause.
func (c *Cluster) Crashes() []string {
	var out []string
	for _, p := range c.Procs() {
		out = append(out, p.Crashes()...)
	}
	return out
}

// Close stops every process and removes the network.
func (c *Cluster) Close() {
	for _, p := range c.Procs() {
		if p.Paused() {
			_ = p.Signal(syscall.SIGCONT)
		}
		p.Kill()
	}
	c.Net.Close()
}

// ReplicaStatus is one meta replica's view, as the control host sees it.
type ReplicaStatus struct {
	Addr    string `json:"addr"`
	Err     string `json:"err,omitempty"`
	ID      uint64 `json:"id"`
	Role    string `json:"role"`
	Leader  uint64 `json:"leader"`
	Term    uint64 `json:"term"`
	Commit  uint64 `json:"commit"`
	Applied uint64 `json:"applied"`
}

// Status asks every meta replica for its status from the control host.
func (c *Cluster) Status(ctx context.Context) ([]ReplicaStatus, error) {
	cmd := c.Net.Command("ctl", c.opts.Helper)
	cmd.Env = append(os.Environ(), ModeEnv+"=status", "STRATO_NETFAULT_META="+strings.Join(c.MetaAddrs, ","))
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("netfault: status: %w", err)
	}
	var st []ReplicaStatus
	if err := json.Unmarshal(out, &st); err != nil {
		return nil, fmt.Errorf("netfault: status: %w: %s", err, out)
	}
	return st, nil
}

// Leader returns the index (0..2) of the replica that leads with the
// agreement of a majority of the replicas that answer, or -1.
func (c *Cluster) Leader(ctx context.Context) (int, []ReplicaStatus) {
	st, err := c.Status(ctx)
	if err != nil {
		return -1, nil
	}
	votes := map[uint64]int{}
	for _, s := range st {
		if s.Err == "" && s.Leader != 0 {
			votes[s.Leader]++
		}
	}
	for id, n := range votes {
		if n >= 2 && id >= 1 && id <= 3 {
			for _, s := range st {
				if s.ID == id && s.Role == "leader" {
					return int(id - 1), st
				}
			}
		}
	}
	return -1, st
}

// WaitStable waits until every replica is up, agrees on one leader and
// has applied what it committed, and returns the leader's index.
func (c *Cluster) WaitStable(ctx context.Context, timeout time.Duration) (int, error) {
	deadline := time.Now().Add(timeout)
	var last []ReplicaStatus
	for time.Now().Before(deadline) {
		l, st := c.Leader(ctx)
		last = st
		if l >= 0 && len(st) == 3 {
			ok := true
			for _, s := range st {
				ok = ok && s.Err == "" && s.Leader == uint64(l+1) && s.Applied+2 >= st[l].Commit
			}
			if ok {
				return l, nil
			}
		}
		select {
		case <-ctx.Done():
			return -1, ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
	return -1, fmt.Errorf("netfault: meta not stable after %v: %+v", timeout, last)
}
