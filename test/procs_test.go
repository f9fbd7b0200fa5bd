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
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/strato-io/strato/client"
	"github.com/strato-io/strato/proto/strato/v1"
	"github.com/strato-io/strato/test/netfault"
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
	if binary, err = netfault.BuildStrato(dir, "../cmd/strato"); err != nil {
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

// proc is a strato server process of a test.
type proc struct {
	t    *testing.T
	name string
	args []string
	env  []string // added to the test's environment
	log  string   // the output of every start, one after the other

	cmd  *exec.Cmd
	done chan struct{} // closed once cmd has exited (cmd.ProcessState is set)
}

// startProc starts `strato ARGS...` (name says which in the logs); it is
// killed when the test ends.
func startProc(t *testing.T, name string, args ...string) *proc {
	t.Helper()
	p := &proc{t: t, name: name, args: args, log: filepath.Join(t.TempDir(), "output.log")}
	t.Cleanup(func() {
		killAll(p)
		if t.Failed() {
			out, _ := os.ReadFile(p.log)
			t.Logf("%s output:\n%s", p.name, out)
		}
	})
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
	procs := make([]*proc, n)
	for i := range procs {
		procs[i] = startDatanode(t, filepath.Join(root, fmt.Sprint("dn", i)), metaAddr, "--heartbeat-interval", "200ms")
	}
	return procs
}

// startDev starts `strato dev` (meta and three datanodes in one process) on
// dir, with meta at metaAddr.
func startDev(t *testing.T, dir, metaAddr string) *proc {
	return startProc(t, "strato dev", "dev", "--data", dir, "--meta-addr", metaAddr)
}

// start starts the process again after stop or kill.
func (p *proc) start() {
	p.t.Helper()
	require.False(p.t, p.running(), "%s is running", p.name)
	out, err := os.OpenFile(p.log, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	require.NoError(p.t, err)
	defer out.Close() // the process has its own copy
	cmd := exec.Command(binary, p.args...)
	cmd.Env = append(os.Environ(), p.env...)
	cmd.Stdout, cmd.Stderr = out, out
	require.NoError(p.t, cmd.Start())
	done := make(chan struct{})
	p.cmd, p.done = cmd, done
	go func() {
		_ = cmd.Wait()
		close(done)
	}()
}

func (p *proc) running() bool {
	if p.done == nil {
		return false
	}
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

// stop sends SIGTERM and requires the process to exit 0 within 15s.
func (p *proc) stop() {
	p.t.Helper()
	require.NoError(p.t, p.cmd.Process.Signal(syscall.SIGTERM))
	select {
	case <-p.done:
	case <-time.After(15 * time.Second):
		p.t.Fatalf("%s did not stop within 15s of SIGTERM", p.name)
	}
	require.True(p.t, p.cmd.ProcessState.Success(), "%s exits 0 on SIGTERM: %v", p.name, p.cmd.ProcessState)
}

// killAll sends SIGKILL to every process that runs, all at once, then
// reaps them.
func killAll(procs ...*proc) {
	for _, p := range procs {
		if p.running() {
			_ = p.cmd.Process.Kill()
		}
	}
	for _, p := range procs {
		if p.done != nil {
			<-p.done
		}
	}
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
				t.Fatalf("%s exited: %v", p.name, p.cmd.ProcessState)
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
