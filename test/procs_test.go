package test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/strato-io/strato/client"
	"github.com/strato-io/strato/proto/strato/v1"
	"github.com/strato-io/strato/test/procs"
)

// The tests' strato processes: the binary TestMain builds, run as a user
// runs it (strato meta, strato datanode, strato dev), each with its output
// in a log file of the test's, shown when the test fails. A process can be
// stopped as an operator does (SIGTERM), killed (SIGKILL) and started again
// with the same flags, on the same directory and address.

var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "strato-bin-")
	if err != nil {
		panic(err)
	}
	if binary, err = procs.Build(dir, "../cmd/strato"); err != nil {
		panic(err)
	}
	code := m.Run()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

func freeAddr(t *testing.T) string {
	handedOut.Lock()
	defer handedOut.Unlock()
	for {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		addr := l.Addr().String()
		require.NoError(t, l.Close())
		// The kernel may give a closed port out again; a port handed to
		// one process must not be handed to another of the same test.
		if !handedOut.addrs[addr] {
			handedOut.addrs[addr] = true
			return addr
		}
	}
}

// handedOut are the addresses freeAddr has returned in this test binary.
var handedOut = struct {
	sync.Mutex
	addrs map[string]bool
}{addrs: map[string]bool{}}

// proc is a strato server process of a test (procs.Proc, failing the
// test where that would return an error).
type proc struct {
	*procs.Proc
	t *testing.T
}

// newProc is `strato ARGS...` (name says which in the logs), not started;
// it is killed when the test ends, and its output shown if the test
// failed.
func newProc(t *testing.T, name string, args ...string) *proc {
	p := &proc{Proc: &procs.Proc{Name: name, Bin: binary, Args: args, Log: filepath.Join(t.TempDir(), "output.log")}, t: t}
	t.Cleanup(func() {
		procs.KillAll(p.Proc)
		if t.Failed() {
			out, _ := os.ReadFile(p.Log)
			t.Logf("%s output:\n%s", p.Name, out)
		}
	})
	return p
}

// startProc starts `strato ARGS...`.
func startProc(t *testing.T, name string, args ...string) *proc {
	t.Helper()
	p := newProc(t, name, args...)
	p.start()
	return p
}

// startMeta starts `strato meta` on dir, serving at addr.
func startMeta(t *testing.T, dir, addr string, flags ...string) *proc {
	return startProc(t, "meta", append([]string{"meta", "--auth", "none", "--data", dir, "--listen", addr}, flags...)...)
}

// startDatanode starts `strato datanode` on dir, of the meta at metaAddr,
// serving at a free address.
func startDatanode(t *testing.T, dir, metaAddr string, flags ...string) *proc {
	args := []string{"datanode", "--data", dir, "--meta", metaAddr, "--listen", freeAddr(t)}
	return startProc(t, "datanode "+filepath.Base(dir), append(args, flags...)...)
}

// startDatanodes starts n datanodes (root/dn0, root/dn1, ...) that
// heartbeat every 200ms.
func startDatanodes(t *testing.T, root, metaAddr string, n int) []*proc {
	ps := make([]*proc, n)
	for i := range ps {
		ps[i] = startDatanode(t, filepath.Join(root, fmt.Sprint("dn", i)), metaAddr, "--heartbeat-interval", "200ms")
	}
	return ps
}

// startDev starts `strato dev` (meta and three datanodes in one process) on
// dir, with meta at metaAddr.
func startDev(t *testing.T, dir, metaAddr string) *proc {
	return startProc(t, "strato dev", "dev", "--data", dir, "--meta-addr", metaAddr)
}

// start starts the process again after stop or kill.
func (p *proc) start() {
	p.t.Helper()
	require.NoError(p.t, p.Start())
}

func (p *proc) running() bool { return p.Running() }

// stop sends SIGTERM and requires the process to exit 0 within 15s.
func (p *proc) stop() {
	p.t.Helper()
	require.NoError(p.t, p.Stop(15*time.Second))
}

// killAll sends SIGKILL to every process that runs, all at once, then
// reaps them.
func killAll(ps ...*proc) {
	all := make([]*procs.Proc, len(ps))
	for i, p := range ps {
		all[i] = p.Proc
	}
	procs.KillAll(all...)
}

// run runs `strato ARGS...` to its end and returns its output.
func run(args ...string) (string, error) {
	out, err := exec.Command(binary, args...).CombinedOutput()
	return string(out), err
}

// cli runs `strato ARGS... --meta metaAddr` and returns its output.
func cli(metaAddr string, args ...string) (string, error) {
	out, err := exec.Command(binary, append(args, "--meta", metaAddr)...).CombinedOutput()
	return string(out), err
}

// waitReady waits until three datanodes are healthy and the cluster takes
// writes (a small key is put and read back), while every one of procs
// runs. metaAddr may list several replicas, comma-separated.
func waitReady(t *testing.T, metaAddr string, procs ...*proc) {
	t.Helper()
	cl, err := client.New(client.Options{Meta: strings.Split(metaAddr, ","), AttemptTimeout: 2 * time.Second,
		Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	defer cl.Close()
	deadline := time.Now().Add(90 * time.Second)
	var last error
	for time.Now().Before(deadline) {
		for _, p := range procs {
			if !p.running() {
				t.Fatalf("%s exited: %v", p.Name, p.State())
			}
		}
		out, err := cli(metaAddr, "admin", "datanode", "list")
		if err == nil && strings.Count(out, "HEALTHY") >= 3 {
			if last = probeWrite(t.Context(), cl); last == nil {
				return
			}
		} else if err != nil {
			last = fmt.Errorf("%w: %s", err, out)
		} else {
			last = fmt.Errorf("fewer than 3 healthy datanodes:\n%s", out)
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("cluster at %s not ready: %v", metaAddr, last)
}

// probeWrite puts a small key in its own volume (before the test's exists)
// and reads it back.
func probeWrite(ctx context.Context, cl *client.Client) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if _, err := cl.CreateVolume(ctx, &stratov1.CreateVolumeRequest{Name: "probe"}); err != nil && !errors.Is(err, client.ErrExists) {
		return err
	}
	if _, err := cl.CreateBucket(ctx, &stratov1.CreateBucketRequest{Volume: "probe", Name: "probeb"}); err != nil && !errors.Is(err, client.ErrExists) {
		return err
	}
	w, err := cl.CreateKey(ctx, "probe", "probeb", "k", client.WriteOptions{})
	if err != nil {
		return err
	}
	if _, err := w.Write([]byte("probe")); err != nil {
		_ = w.Close()
		return err
	}
	if err := w.Close(); err != nil {
		return err
	}
	r, err := cl.OpenKey(ctx, "probe", "probeb", "k")
	if err != nil {
		return err
	}
	defer r.Close()
	_, err = io.ReadAll(r)
	return err
}
