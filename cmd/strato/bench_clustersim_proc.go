package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/strato-io/strato/bench/clustersim"
	"github.com/strato-io/strato/bytesize"
)

// metaProcess is `strato meta` run as a child of cluster-sim
// (--meta-process): meta as it is deployed, with a Go scheduler, a
// collector and memory of its own, apart from the simulated datanodes'.
// Its figures come from its /metrics and from /proc: the CPU time and
// peak resident memory are meta's alone.
type metaProcess struct {
	bin, log   string
	args       []string
	addr, http string

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{} // closed when cmd has exited
	// cpuBefore and peakBefore: the CPU time and the peak resident memory
	// of the processes already stopped (a restart is a new process).
	cpuBefore  time.Duration
	peakBefore int64
	// last is the last figures read, answered while a scrape fails (a
	// restart under way).
	last clustersim.MetaStats
}

// metaProcessOptions are what the child meta is started with.
type metaProcessOptions struct {
	dir                string
	containerSize      int64
	deadAfter, replInt time.Duration
	replicationStep    int
}

// startMetaProcess starts meta on o.dir, and waits until it serves.
func startMetaProcess(ctx context.Context, o metaProcessOptions) (*metaProcess, error) {
	if o.replicationStep != 0 {
		return nil, usagef("--replication-step is a setting of the in-process meta: not with --meta-process")
	}
	bin, err := os.Executable()
	if err != nil {
		return nil, err
	}
	p := &metaProcess{bin: bin, log: filepath.Join(o.dir, "meta.log")}
	for _, a := range []*string{&p.addr, &p.http} {
		if *a, err = freeLoopbackAddr(); err != nil {
			return nil, err
		}
	}
	size := bytesize.Exact(o.containerSize)
	p.args = []string{"meta", "--data", filepath.Join(o.dir, "meta"), "--listen", p.addr, "--http", p.http,
		"--auth", "none", "--container-size", size, "--block-size", size, "--disk-reserve", "0",
		"--stale-after", (o.deadAfter / 2).String(), "--dead-after", o.deadAfter.String()}
	if o.replInt > 0 {
		p.args = append(p.args, "--replication-interval", o.replInt.String())
	}
	if err := p.start(ctx); err != nil {
		return nil, err
	}
	return p, nil
}

// metaHTTP asks the child meta's HTTP endpoint: a meta that stops
// answering fails a call rather than hang the simulation.
var metaHTTP = &http.Client{Timeout: 10 * time.Second}

// freeLoopbackAddr is a free port of 127.0.0.1 (free when asked).
func freeLoopbackAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer func() { _ = l.Close() }()
	return l.Addr().String(), nil
}

// start starts the process and waits until its /healthz answers.
func (p *metaProcess) start(ctx context.Context) error {
	logf, err := os.OpenFile(p.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer func() { _ = logf.Close() }() // the child holds its own descriptor
	cmd := exec.Command(p.bin, p.args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start meta: %w", err)
	}
	done := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(done)
	}()
	p.mu.Lock()
	p.cmd, p.done = cmd, done
	p.mu.Unlock()
	deadline := time.Now().Add(time.Minute)
	for {
		r, err := metaHTTP.Get("http://" + p.http + "/healthz")
		if err == nil {
			_ = r.Body.Close()
			if r.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-done:
			return fmt.Errorf("meta exited as it started: %s", p.log)
		case <-ctx.Done():
			return errors.Join(ctx.Err(), p.stop())
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return errors.Join(fmt.Errorf("meta not serving a minute after its start: %s", p.log), p.stop())
		}
	}
}

// stop stops the process as an operator does (SIGTERM), killing it if it
// has not exited within two minutes, and adds its CPU time and peak memory
// to those of the processes before it.
func (p *metaProcess) stop() error {
	p.mu.Lock()
	cmd, done := p.cmd, p.done
	p.cmd = nil
	p.mu.Unlock()
	if cmd == nil {
		return nil
	}
	cpu, peak, _ := procUsage(cmd.Process.Pid)
	_ = cmd.Process.Signal(syscall.SIGTERM)
	var err error
	select {
	case <-done:
	case <-time.After(2 * time.Minute):
		_ = cmd.Process.Kill()
		<-done
		err = fmt.Errorf("meta did not stop within 2 minutes of SIGTERM: killed (%s)", p.log)
	}
	p.mu.Lock()
	p.cpuBefore += cpu
	p.peakBefore = max(p.peakBefore, peak)
	p.mu.Unlock()
	return err
}

// restart is clustersim.Options.Restart: meta stopped and started again
// on its data.
func (p *metaProcess) restart() error {
	if err := p.stop(); err != nil {
		return err
	}
	return p.start(context.Background())
}

// stats is clustersim.Options.Stats: meta's figures from its /metrics, its
// CPU time and peak memory from /proc. While /metrics does not answer (a
// restart), the last figures read.
func (p *metaProcess) stats() clustersim.MetaStats {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil {
		return p.last
	}
	m, err := scrapeMetrics("http://" + p.http + "/metrics")
	if err != nil {
		return p.last
	}
	st := clustersim.MetaStats{
		Dead:        int(m["strato_meta_datanodes_dead"]),
		Scheduled:   uint64(m["strato_meta_replications_scheduled_total"]),
		Passes:      uint64(m["strato_meta_replication_passes_total"]),
		PassTook:    time.Duration(m["strato_meta_replication_pass_seconds"] * float64(time.Second)),
		Closing:     int(m["strato_meta_closing_containers"]),
		FullReports: uint64(m["strato_meta_full_reports_total"]),
		Repeated:    uint64(m["strato_meta_full_reports_repeated_total"]),
		GCs:         uint32(m["go_gc_duration_seconds_count"]),
	}
	cpu, peak, err := procUsage(p.cmd.Process.Pid)
	if err != nil {
		return p.last
	}
	st.CPU, st.PeakRSS = p.cpuBefore+cpu, max(p.peakBefore, peak)
	p.last = st
	return st
}

// scrapeMetrics reads a Prometheus text page: the value of each sample
// without labels, by name.
func scrapeMetrics(url string) (map[string]float64, error) {
	r, err := metaHTTP.Get(url)
	if err != nil {
		return nil, err
	}
	defer func() { _ = r.Body.Close() }()
	if r.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s: %s", url, r.Status)
	}
	out := map[string]float64{}
	sc := bufio.NewScanner(r.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		name, val, ok := strings.Cut(sc.Text(), " ")
		if !ok || strings.HasPrefix(name, "#") || strings.Contains(name, "{") {
			continue
		}
		if v, err := strconv.ParseFloat(val, 64); err == nil {
			out[name] = v
		}
	}
	return out, sc.Err()
}

// procUsage is process pid's CPU time (user and system, /proc/PID/stat)
// and peak resident memory (VmHWM, /proc/PID/status).
func procUsage(pid int) (cpu time.Duration, peak int64, err error) {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, 0, err
	}
	// The fields after the command's closing parenthesis, from the third:
	// utime and stime are the 14th and 15th, in clock ticks (100 a second).
	i := strings.LastIndexByte(string(stat), ')')
	f := strings.Fields(string(stat[i+1:]))
	if i < 0 || len(f) < 13 {
		return 0, 0, fmt.Errorf("/proc/%d/stat: %q", pid, stat)
	}
	ut, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return 0, 0, err
	}
	cpu = time.Duration(ut+st) * (time.Second / 100)
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, err
	}
	for _, line := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				return 0, 0, fmt.Errorf("/proc/%d/status: VmHWM %q", pid, v)
			}
			peak = kb << 10
		}
	}
	return cpu, peak, nil
}
