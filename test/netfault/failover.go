package netfault

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"time"
)

// FailoverOptions configure MeasureFailover.
type FailoverOptions struct {
	// Kills is the number of leader kills. Default 20.
	Kills int
	// Dir, Strato, Helper: see ClusterOptions. Required.
	Dir, Strato, Helper string
	// Writers is the number of writers of each kind. Default 3.
	Writers int
	// OpTimeout bounds each write. Default 2s.
	OpTimeout time.Duration
	// Logf receives progress lines. Default: none.
	Logf func(format string, args ...any)
}

// FailoverResult holds, per kill, the time from the SIGKILL of the leader
// to the end of the first successful write started after it: Meta for a
// directory creation (meta only), Key for a small OBS key (meta and
// datanodes: open, data, commit).
type FailoverResult struct {
	Meta, Key []time.Duration
}

// Summary returns the median and the maximum of d.
func Summary(d []time.Duration) (median, maxD time.Duration) {
	if len(d) == 0 {
		return 0, 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	if len(s)%2 == 1 {
		median = s[len(s)/2]
	} else {
		median = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return median, s[len(s)-1]
}

// MeasureFailover runs a cluster with writers on one client host, kills the
// leader o.Kills times (starting it again and waiting for the group to be
// whole between kills) and measures each failover.
func MeasureFailover(ctx context.Context, o FailoverOptions) (*FailoverResult, error) {
	orDefault(&o.Kills, 20)
	orDefault(&o.Writers, 3)
	orDefault(&o.OpTimeout, 2*time.Second)
	o.Logf = orNop(o.Logf)
	RemoveStale()
	c, err := StartCluster(ClusterOptions{Dir: o.Dir, Strato: o.Strato, Helper: o.Helper, Clients: 1})
	if err != nil {
		return nil, err
	}
	defer c.Close()
	if _, err := c.WaitStable(ctx, 30*time.Second); err != nil {
		return nil, err
	}
	cfg := WorkConfig{Meta: c.MetaAddrs, Host: "c1", Workers: o.Writers, Groups: 1, OpTimeout: o.OpTimeout,
		Out: filepath.Join(o.Dir, "history-writer.jsonl")}
	if err := c.runHelper(ctx, "c1", "setup", cfg, 2*time.Minute); err != nil {
		return nil, err
	}
	raw, _ := json.Marshal(cfg)
	logf, err := os.Create(filepath.Join(o.Dir, "c1-writer.log"))
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	w := c.Net.Command("c1", o.Helper)
	w.Env = append(os.Environ(), ModeEnv+"=writer", ConfigEnv+"="+string(raw))
	w.Stdout, w.Stderr = logf, logf
	if err := w.Start(); err != nil {
		return nil, err
	}
	defer func() { _ = w.Process.Kill(); _ = w.Wait() }()

	// firstOK returns, per kind, the end of the first successful write that
	// started at or after t (0: none yet).
	firstOK := func(t int64) (map[string]int64, error) {
		ops, err := ReadHistory(cfg.Out)
		if err != nil {
			return nil, err
		}
		first := map[string]int64{}
		for _, op := range ops {
			if op.Outcome == OK && op.Call >= t && (first[op.Kind] == 0 || op.Return < first[op.Kind]) {
				first[op.Kind] = op.Return
			}
		}
		return first, nil
	}
	res := &FailoverResult{}
	for k := range o.Kills {
		leader, err := c.WaitStable(ctx, 60*time.Second)
		if err != nil {
			return res, err
		}
		time.Sleep(time.Second) // writes going to the settled leader
		p := c.Metas[leader]
		t := Now()
		if err := p.Signal(syscall.SIGKILL); err != nil {
			return res, err
		}
		var first map[string]int64
		for deadline := time.Now().Add(60 * time.Second); ; {
			time.Sleep(100 * time.Millisecond)
			if first, err = firstOK(t); err != nil {
				return res, err
			}
			if first["wmeta"] != 0 && first["wkey"] != 0 {
				break
			}
			if time.Now().After(deadline) {
				return res, fmt.Errorf("netfault: no successful write within 60s of killing %s", p.Host)
			}
		}
		dm, dk := time.Duration(first["wmeta"]-t), time.Duration(first["wkey"]-t)
		res.Meta, res.Key = append(res.Meta, dm), append(res.Key, dk)
		o.Logf("kill %d: %s (leader) SIGKILL → first directory created after %v, first key put after %v", k+1, p.Host, dm.Round(time.Millisecond), dk.Round(time.Millisecond))
		if err := p.Start(); err != nil {
			return res, err
		}
	}
	if crashes := c.Crashes(); len(crashes) > 0 {
		return res, fmt.Errorf("netfault: processes exited by themselves: %v", crashes)
	}
	return res, nil
}
