package netfault

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// NamePrefix starts the name of every network namespace the harness makes:
// "snf<pid>x<n>-<host>", where pid is the test process that made it.
const NamePrefix = "snf"

// ErrNoNetns: this machine cannot run the harness (not root, or no ip netns).
var ErrNoNetns = errors.New("netfault: network namespaces unavailable")

// Available reports why the harness cannot run here, or nil.
func Available() error {
	if os.Geteuid() != 0 {
		return fmt.Errorf("%w: not root", ErrNoNetns)
	}
	if _, err := exec.LookPath("ip"); err != nil {
		return fmt.Errorf("%w: no ip command (iproute2)", ErrNoNetns)
	}
	if out, err := exec.Command("ip", "netns", "list").CombinedOutput(); err != nil {
		return fmt.Errorf("%w: ip netns list: %w: %s", ErrNoNetns, err, bytes.TrimSpace(out))
	}
	return nil
}

// Network is a set of hosts, one network namespace each, joined by a router
// namespace: host i has address 10.213.i.2 on a veth whose peer, 10.213.i.1,
// is in the router, and a route to 10.213.0.0/16 through it. No host has a
// route anywhere else, so nothing a test starts can reach the machine's
// real network. A cut is an "ip rule ... blackhole" in the router: the
// packets of one direction are dropped silently, as on a real network
// partition (the sender sees a timeout, not an error).
type Network struct {
	id    string
	hosts []string
	index map[string]int

	mu   sync.Mutex
	cuts map[[2]string]bool
}

var netSeq struct {
	sync.Mutex
	n int
}

// NewNetwork makes the namespaces of hosts (at most 250) and the router.
// Close removes them.
func NewNetwork(hosts []string) (*Network, error) {
	if len(hosts) == 0 || len(hosts) > 250 {
		return nil, fmt.Errorf("netfault: %d hosts (want 1 to 250)", len(hosts))
	}
	netSeq.Lock()
	netSeq.n++
	id := fmt.Sprintf("%s%dx%d", NamePrefix, os.Getpid(), netSeq.n)
	netSeq.Unlock()
	n := &Network{id: id, hosts: hosts, index: map[string]int{}, cuts: map[[2]string]bool{}}
	for i, h := range hosts {
		if _, dup := n.index[h]; dup || h == "" || strings.ContainsAny(h, " /-") {
			return nil, fmt.Errorf("netfault: bad or repeated host name %q", h)
		}
		n.index[h] = i + 1
	}
	if err := n.build(); err != nil {
		n.Close()
		return nil, err
	}
	return n, nil
}

func (n *Network) router() string { return n.id + "-router" }

// NS returns the name of a host's network namespace.
func (n *Network) NS(host string) string { return n.id + "-" + host }

// Addr returns a host's address.
func (n *Network) Addr(host string) string {
	i, ok := n.index[host]
	if !ok {
		panic("netfault: unknown host " + host)
	}
	return fmt.Sprintf("10.213.%d.2", i)
}

func (n *Network) build() error {
	r := n.router()
	cmds := [][]string{{"netns", "add", r}, {"-n", r, "link", "set", "lo", "up"}}
	for _, h := range n.hosts {
		i, ns := n.index[h], n.NS(h)
		veth := fmt.Sprintf("v%d", i)
		cmds = append(cmds,
			[]string{"netns", "add", ns},
			[]string{"-n", ns, "link", "set", "lo", "up"},
			[]string{"link", "add", "name", "eth0", "netns", ns, "type", "veth", "peer", "name", veth, "netns", r},
			[]string{"-n", ns, "addr", "add", fmt.Sprintf("10.213.%d.2/24", i), "dev", "eth0"},
			[]string{"-n", r, "addr", "add", fmt.Sprintf("10.213.%d.1/24", i), "dev", veth},
			[]string{"-n", ns, "link", "set", "eth0", "up"},
			[]string{"-n", r, "link", "set", veth, "up"},
			[]string{"-n", ns, "route", "add", "10.213.0.0/16", "via", fmt.Sprintf("10.213.%d.1", i)},
		)
	}
	for _, c := range cmds {
		if err := ip(c...); err != nil {
			return err
		}
	}
	// Forwarding in the router namespace only.
	if out, err := exec.Command("ip", "netns", "exec", r, "sh", "-c", "echo 1 > /proc/sys/net/ipv4/ip_forward").CombinedOutput(); err != nil {
		return fmt.Errorf("netfault: enable forwarding: %w: %s", err, out)
	}
	return nil
}

func ip(args ...string) error {
	out, err := exec.Command("ip", args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("netfault: ip %s: %w: %s", strings.Join(args, " "), err, bytes.TrimSpace(out))
	}
	return nil
}

// Command returns a command that runs name with args inside host's
// namespace ("ip netns exec" execs it, so the process keeps its PID and
// signals reach it directly). It is killed if the test process dies.
func (n *Network) Command(host, name string, args ...string) *exec.Cmd {
	cmd := exec.Command("ip", append([]string{"netns", "exec", n.NS(host), name}, args...)...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	return cmd
}

// commandOn is Command on host, as a procs.Proc's Command.
func (n *Network) commandOn(host string) func(name string, args ...string) *exec.Cmd {
	return func(name string, args ...string) *exec.Cmd { return n.Command(host, name, args...) }
}

// Cut drops the packets from host a to host b (one direction).
func (n *Network) Cut(a, b string) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.cuts[[2]string{a, b}] {
		return nil
	}
	if err := ip("-n", n.router(), "rule", "add", "from", n.Addr(a), "to", n.Addr(b), "blackhole"); err != nil {
		return err
	}
	n.cuts[[2]string{a, b}] = true
	return nil
}

// Partition cuts a from b in both directions.
func (n *Network) Partition(a, b string) error {
	return errors.Join(n.Cut(a, b), n.Cut(b, a))
}

// Heal removes every cut.
func (n *Network) Heal() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	var errs []error
	for c := range n.cuts {
		if err := ip("-n", n.router(), "rule", "del", "from", n.Addr(c[0]), "to", n.Addr(c[1]), "blackhole"); err != nil {
			errs = append(errs, err)
			continue
		}
		delete(n.cuts, c)
	}
	return errors.Join(errs...)
}

// Close kills whatever still runs in the namespaces and deletes them (the
// veths go with them).
func (n *Network) Close() {
	for _, h := range n.hosts {
		removeNS(n.NS(h))
	}
	removeNS(n.router())
}

// removeNS kills the processes inside a namespace and deletes it.
func removeNS(ns string) {
	if out, err := exec.Command("ip", "netns", "pids", ns).Output(); err == nil {
		for _, f := range strings.Fields(string(out)) {
			if pid, err := strconv.Atoi(f); err == nil && pid > 1 {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	}
	_ = exec.Command("ip", "netns", "del", ns).Run()
}

// RemoveStale deletes the namespaces left by harness runs whose test
// process is gone (a crashed or killed run), with what runs in them.
func RemoveStale() []string {
	out, err := exec.Command("ip", "netns", "list").Output()
	if err != nil {
		return nil
	}
	var removed []string
	for _, line := range strings.Split(string(out), "\n") {
		fs := strings.Fields(line)
		if len(fs) == 0 || !strings.HasPrefix(fs[0], NamePrefix) {
			continue
		}
		name := fs[0]
		digits := strings.TrimPrefix(name, NamePrefix)
		end := strings.IndexByte(digits, 'x')
		if end <= 0 {
			continue
		}
		pid, err := strconv.Atoi(digits[:end])
		if err != nil {
			continue
		}
		if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); err == nil {
			continue // its run is still going
		}
		removeNS(name)
		removed = append(removed, name)
	}
	return removed
}
