package netfault

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// ScenarioOptions configure one scenario.
type ScenarioOptions struct {
	// Seed fixes the fault schedule and the clients' operations.
	Seed uint64
	// Duration is how long the clients run while faults are injected.
	// Default 25s.
	Duration time.Duration
	// Dir receives data directories, logs and histories. Required.
	Dir string
	// Strato and Helper: see ClusterOptions. Required.
	Strato, Helper string
	// Clients is the number of client hosts, Workers the workers of
	// each (concurrent operation sequences). Defaults 2 and 3.
	Clients, Workers int
	// Groups is the number of FSO groups and of OBS groups. Default 4.
	Groups int
	// OpTimeout bounds each client operation. Default 4s.
	OpTimeout time.Duration
	// CheckTimeout bounds porcupine's check. Default 2m.
	CheckTimeout time.Duration
	// Logf receives progress lines. Default: none.
	Logf func(format string, args ...any)
}

func (o *ScenarioOptions) ensureDefaults() {
	orDefault(&o.Duration, 25*time.Second)
	orDefault(&o.Clients, 2)
	orDefault(&o.Workers, 3)
	orDefault(&o.Groups, 4)
	orDefault(&o.OpTimeout, 4*time.Second)
	orDefault(&o.CheckTimeout, 2*time.Minute)
	o.Logf = orNop(o.Logf)
}

// orDefault sets *v to d when it is not positive.
func orDefault[T int | time.Duration](v *T, d T) {
	if *v <= 0 {
		*v = d
	}
}

func orNop(f func(string, ...any)) func(string, ...any) {
	if f == nil {
		return func(string, ...any) {}
	}
	return f
}

// ScenarioResult is what a scenario found.
type ScenarioResult struct {
	Seed    uint64
	Faults  []Event
	Report  *Report
	Crashes []string
	// History is every operation the clients recorded.
	History []*Op
	// FollowerReads and FollowerFallbacks are the reads of the clients
	// with follower reads on (every other client host: c2, c4, ...) that a
	// replica other than the presumed leader served, and those that fell
	// back to the leader.
	FollowerReads, FollowerFallbacks uint64
	// Visualization is porcupine's HTML file when the check failed.
	Visualization string
}

// OK reports whether the scenario found nothing wrong.
func (r *ScenarioResult) OK() bool {
	return r.Report != nil && r.Report.OK() && len(r.Crashes) == 0
}

// RunScenario starts a cluster, runs the clients under the seed's faults,
// heals everything, reads the final state and checks the history. An error
// means the scenario could not run to the end (the cluster did not come
// back, a client process failed); a finished scenario's verdict is in the
// result.
func RunScenario(ctx context.Context, o ScenarioOptions) (*ScenarioResult, error) {
	o.ensureDefaults()
	res := &ScenarioResult{Seed: o.Seed}
	if removed := RemoveStale(); len(removed) > 0 {
		o.Logf("removed namespaces left by earlier runs: %v", removed)
	}
	c, err := StartCluster(ClusterOptions{Dir: o.Dir, Strato: o.Strato, Helper: o.Helper, Clients: o.Clients})
	if err != nil {
		return nil, err
	}
	defer c.Close()
	t0 := Now()
	rel := func(t int64) string { return fmt.Sprintf("%6.2fs", float64(t-t0)/1e9) }
	if _, err := c.WaitStable(ctx, 30*time.Second); err != nil {
		return nil, err
	}
	base := WorkConfig{Meta: c.MetaAddrs, Groups: o.Groups, Workers: o.Workers, Duration: o.Duration, OpTimeout: o.OpTimeout}
	if err := c.runHelper(ctx, "c1", "setup", base, 2*time.Minute); err != nil {
		return nil, err
	}
	o.Logf("%s cluster up, namespace ready; seed %d, %v of faults", rel(Now()), o.Seed, o.Duration)

	var files []string
	errc := make(chan error, len(c.Clients))
	var frMu sync.Mutex
	for i, h := range c.Clients {
		cfg := base
		cfg.Host, cfg.Seed, cfg.Out = h, o.Seed*100+uint64(i), filepath.Join(o.Dir, "history-"+h+".jsonl")
		// Every other client reads from all the replicas (linearizable
		// follower reads), the others from the leader: one history
		// holds both.
		cfg.FollowerReads = i%2 == 1
		files = append(files, cfg.Out)
		go func() {
			out, err := c.helperOutput(ctx, h, "work", cfg, o.Duration+o.OpTimeout+time.Minute)
			for _, line := range strings.SplitAfter(string(out), "\n") {
				var served, fallbacks uint64
				if _, serr := fmt.Sscanf(line, followerReadsLine, &served, &fallbacks); serr == nil {
					frMu.Lock()
					res.FollowerReads += served
					res.FollowerFallbacks += fallbacks
					frMu.Unlock()
				}
			}
			errc <- err
		}()
	}
	end := time.Now().Add(o.Duration)
	for _, f := range Plan(o.Seed, o.Duration) {
		if time.Until(end) < f.Hold+time.Second || ctx.Err() != nil {
			break
		}
		ev, err := c.Inject(ctx, f)
		res.Faults = append(res.Faults, ev)
		o.Logf("%s %s, healed at %s", rel(ev.Start), ev.What, rel(ev.End))
		if err != nil {
			return res, err
		}
		time.Sleep(f.Gap)
	}
	var werr []error
	for range c.Clients {
		werr = append(werr, <-errc)
	}
	if err := errors.Join(append(werr, c.HealAll())...); err != nil {
		return res, err
	}
	o.Logf("%s clients done; healing; follower reads: %d served by a follower, %d fell back to the leader",
		rel(Now()), res.FollowerReads, res.FollowerFallbacks)
	if _, err := c.WaitStable(ctx, 30*time.Second); err != nil {
		return res, err
	}
	vcfg := base
	vcfg.Host, vcfg.Out = "verify", filepath.Join(o.Dir, "history-verify.jsonl")
	if err := c.runHelper(ctx, "c1", "verify", vcfg, 2*time.Minute); err != nil {
		return res, err
	}
	files = append(files, vcfg.Out)
	res.Crashes = c.Crashes()
	ops, err := ReadHistory(files...)
	if err != nil {
		return res, err
	}
	res.History = ops
	res.Report = Check(ops, o.CheckTimeout)
	o.Logf("seed %d: %s", o.Seed, res.Report)
	if !res.Report.OK() {
		res.Visualization = filepath.Join(o.Dir, "porcupine.html")
		if err := Visualize(res.Report, res.Faults, res.Visualization); err != nil {
			o.Logf("visualization: %v", err)
		}
	}
	return res, nil
}

// runHelper runs the helper binary in mode on host and waits for it.
func (c *Cluster) runHelper(ctx context.Context, host, mode string, cfg WorkConfig, timeout time.Duration) error {
	_, err := c.helperOutput(ctx, host, mode, cfg, timeout)
	return err
}

// helperOutput runs the helper binary in mode on host, waits for it and
// returns what it printed.
func (c *Cluster) helperOutput(ctx context.Context, host, mode string, cfg WorkConfig, timeout time.Duration) ([]byte, error) {
	raw, err := json.Marshal(cfg)
	if err != nil {
		return nil, err
	}
	logPath := filepath.Join(c.opts.Dir, fmt.Sprintf("%s-%s.log", host, mode))
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	var out bytes.Buffer
	cmd := c.Net.Command(host, c.opts.Helper)
	cmd.Env = append(os.Environ(), ModeEnv+"="+mode, ConfigEnv+"="+string(raw))
	cmd.Stdout, cmd.Stderr = io.MultiWriter(logf, &out), logf
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err = <-done:
	case <-time.After(timeout):
		_ = cmd.Process.Kill()
		err = fmt.Errorf("timed out after %v (%w)", timeout, <-done)
	case <-ctx.Done():
		_ = cmd.Process.Kill()
		err = fmt.Errorf("%w (%w)", ctx.Err(), <-done)
	}
	if err != nil {
		log, _ := os.ReadFile(logPath)
		return nil, fmt.Errorf("netfault: %s on %s: %w\n%s", mode, host, err, tail(log, 3000))
	}
	return out.Bytes(), nil
}

func tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}
