package main

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime"
	"time"

	"github.com/spf13/cobra"

	"github.com/strato-io/strato/bench/clustersim"
	"github.com/strato-io/strato/bytesize"
	"github.com/strato-io/strato/meta"
	"github.com/strato-io/strato/minicluster"
)

func init() { benchCommands = append(benchCommands, newBenchClusterSimCmd) }

func newBenchClusterSimCmd() *cobra.Command {
	var (
		o        clustersim.Options
		csize    string
		dir      string
		prof     string
		measured bool
		mprof    string
		tprof    string
		hprof    string
		restart  bool
		replInt  time.Duration
		dead     time.Duration
		step     int
		proc     bool
	)
	cmd := &cobra.Command{
		Use:   "cluster-sim [--datanodes 1000] [--containers N] [--duration 30s] [--meta ADDR]",
		Short: "Simulate thousands of datanodes heartbeating to one meta, and measure meta's side",
		Long: `cluster-sim runs --datanodes simulated datanodes in this process against a
meta: an in-process one (in --dir or a temporary directory), a strato meta
process of its own that it starts (--meta-process: meta as deployed, its
CPU time and memory apart), or the one at --meta, which must run with
--auth none and --container-size and --block-size both this command's
--container-size. Each datanode registers, then heartbeats every
--heartbeat-interval with its changed replicas (a full report every
--full-report-every heartbeats) and carries out the close commands meta
sends. --containers containers are made through meta's block allocation
(one file per container, sized to fill it; three replicas each, reported
full so that meta closes them), while the datanodes heartbeat. Then the
heartbeats are measured for --duration: their count and latency (p50,
p99, max; full reports apart). Then (--kill; not with --meta) that many
datanodes of one rack stop at once, and the time until meta holds them
dead and has commanded a copy of every container they held is measured.
Then (--restart; not with --meta) meta is restarted: the datanodes, told
they are unknown, register again with full reports, and the time until
meta leaves safe mode is measured. It prints the time to register and to
make the containers, the replicas reported and CLOSED at the end, the Go
heap of this process (meta's and the simulation's together when meta runs
in process) and, with --meta-process, meta's CPU time and peak memory.
Ozone's freon simulate-datanode, HDFS's blockReport.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			size, err := bytesize.Parse(csize)
			if err != nil || size <= 0 {
				return usagef("--container-size %q: a size such as 64MiB", csize)
			}
			o.ContainerSize = size
			o.Log = cmd.ErrOrStderr()
			if o.Meta != "" && proc {
				return usagef("--meta and --meta-process exclude each other")
			}
			if o.Meta == "" {
				if dir == "" {
					if dir, err = os.MkdirTemp("", "strato-cluster-sim-*"); err != nil {
						return err
					}
					defer func() { _ = os.RemoveAll(dir) }()
				}
			}
			switch {
			case proc:
				mp, err := startMetaProcess(cmd.Context(), metaProcessOptions{dir: dir, containerSize: size,
					deadAfter: dead, replInt: replInt, replicationStep: step})
				if err != nil {
					return err
				}
				defer func() { _ = mp.stop() }()
				o.Meta, o.Stats = mp.addr, mp.stats
				if restart {
					o.Restart = mp.restart
				}
				fmt.Fprintf(cmd.ErrOrStderr(), "cluster-sim: meta in its own process at %s (data and log in %s)\n", o.Meta, dir)
			case o.Meta == "":
				mc, err := minicluster.Start(cmd.Context(), minicluster.Options{Dir: dir, MetaOnly: true,
					ContainerSize: size, BlockSize: size, Logger: slog.New(slog.DiscardHandler),
					ConfigureMeta: func(_ int, mo *meta.Options) {
						mo.ReplicationInterval = replInt
						mo.Cluster.StaleAfter, mo.Cluster.DeadAfter = dead/2, dead
						mo.Cluster.ReplicationStep = step
					}})
				if err != nil {
					return err
				}
				defer func() { _ = mc.Close() }()
				o.Meta = mc.MetaAddr()
				o.Stats = func() clustersim.MetaStats {
					m := mc.Meta().Metrics()
					st := clustersim.MetaStats{Dead: m.DeadDatanodes, Scheduled: m.ReplicationsScheduled,
						Passes: m.ReplicationPasses, PassTook: m.ReplicationPassTook, Closing: m.ClosingContainers,
						FullReports: m.FullReports, Repeated: m.RepeatedFullReports}
					st.CPU, st.PeakRSS, st.GCs = clustersim.SelfUsage()
					return st
				}
				if restart {
					o.Restart = mc.RestartMeta
				}
				fmt.Fprintf(cmd.ErrOrStderr(), "cluster-sim: meta in process at %s (data in %s)\n", o.Meta, dir)
			}
			p := &simProfiles{cpu: prof, mutex: mprof, trace: tprof, heap: hprof}
			if measured {
				o.Measuring = p.measuring
			} else {
				p.start()
			}
			defer p.stop()
			if p.err != nil {
				return p.err
			}
			res, err := clustersim.Run(cmd.Context(), o)
			if err != nil {
				return err
			}
			if p.stop(); p.err != nil {
				return p.err
			}
			printClusterSim(cmd.OutOrStdout(), &o, res, proc)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Meta, "meta", "", "meta's gRPC address (default: an in-process meta)")
	f.StringVar(&dir, "dir", "", "directory of the in-process meta's or --meta-process's data (default: a temporary one, removed afterwards)")
	f.BoolVar(&proc, "meta-process", false, "run meta as a strato meta process of its own, as it is deployed, rather than in this process: its Go scheduler and collector are not shared with the simulated datanodes, and its CPU time and memory are its own (--kill and --restart too: a restart stops the process with SIGTERM and starts it again)")
	f.IntVar(&o.Datanodes, "datanodes", 1000, "simulated datanodes")
	f.IntVar(&o.Containers, "containers", 0, "containers to make, three replicas each (default: 10 per datanode)")
	f.StringVar(&csize, "container-size", "64MiB", "meta's container size (and block size: the one a container holds; that of the meta this command starts, or the --meta server's)")
	f.DurationVar(&o.HeartbeatInterval, "heartbeat-interval", 3*time.Second, "each datanode's heartbeat interval")
	f.IntVar(&o.FullReportEvery, "full-report-every", 20, "heartbeats between a datanode's full container reports")
	f.DurationVar(&o.Duration, "duration", 30*time.Second, "how long heartbeats are measured once the containers exist")
	f.IntVar(&o.Writers, "writers", 16, "parallel allocations making the containers")
	f.IntVar(&o.Conns, "conns", 64, "gRPC connections to meta the datanodes share, datanode i on connection i mod --conns (a real datanode has its own)")
	f.DurationVar(&replInt, "replication-interval", 0, "the --replication-interval of the meta this command starts (default: meta's, every tick while there is something to repair, else 10x the last pass's length)")
	f.IntVar(&o.Kill, "kill", 100, "not with --meta: then stop this many datanodes of one rack at once and measure how soon meta finds them dead and plans the copies of their containers")
	f.DurationVar(&dead, "dead-after", 20*time.Second, "the time, for the meta this command starts, before a silent datanode is DEAD (STALE at half of it)")
	f.IntVar(&step, "replication-step", 0, "the in-process meta's replication pass step (cluster.Options.ReplicationStep; default 1000 containers; not with --meta-process)")
	f.BoolVar(&restart, "restart", true, "not with --meta: then restart meta and measure how soon it leaves safe mode, every datanode registering again")
	f.StringVar(&mprof, "mutexprofile", "", "write a profile of the contended mutexes (one in ten sampled) of the whole run to this file: where goroutines waited for a lock, and for how long")
	f.StringVar(&prof, "cpuprofile", "", "write a CPU profile of the whole run (meta's and the simulation's, with an in-process meta) to this file")
	f.StringVar(&hprof, "memprofile", "", "write a heap profile (what is in use, after a collection) to this file when the profiles stop: at the end of the run, or of the measured heartbeats with --profile-measured")
	f.StringVar(&tprof, "trace", "", "write a runtime execution trace (go tool trace) to this file; large: use it with --profile-measured")
	f.BoolVar(&measured, "profile-measured", false, "--cpuprofile, --mutexprofile and --trace cover the measured heartbeats only, not the whole run")
	return cmd
}

// simProfiles are cluster-sim's CPU and mutex profiles and its execution
// trace (files cpu, mutex and trace, "": none), over the whole run or
// (measuring) the measured heartbeats, and its heap profile (file heap)
// when they stop; err is the first error starting or writing them.
type simProfiles struct {
	cpu, mutex, trace  string
	heap               string
	stopCPU, stopTrace func()
	stopMutex          func() error
	err                error
}

func (p *simProfiles) start() {
	if p.stopCPU, p.err = startCPUProfile(p.cpu); p.err != nil {
		return
	}
	if p.stopTrace, p.err = startTrace(p.trace); p.err != nil {
		p.stopCPU()
		p.stopCPU = nil
		return
	}
	p.stopMutex = startMutexProfile(p.mutex, 10)
}

func (p *simProfiles) stop() {
	if p.stopCPU == nil {
		return
	}
	p.stopTrace()
	p.stopCPU()
	if err := p.stopMutex(); p.err == nil {
		p.err = err
	}
	if err := writeHeapProfile(p.heap); p.err == nil {
		p.err = err
	}
	p.stopCPU = nil
}

// measuring is clustersim.Options.Measuring: the profiles cover the
// measured heartbeats.
func (p *simProfiles) measuring(begin bool) {
	if begin {
		p.start()
	} else {
		p.stop()
	}
}

// printClusterSim prints what a simulation measured.
func printClusterSim(w io.Writer, o *clustersim.Options, res *clustersim.Result, proc bool) {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	fmt.Fprintf(w, "datanodes: %d, containers: %d (replicas reported %d, CLOSED %d)\n", res.Datanodes, res.Containers, res.Replicas, res.Closed)
	fmt.Fprintf(w, "register: %v, containers made in %v (%d allocations failed)\n", res.Register.Round(time.Millisecond),
		res.Create.Round(time.Millisecond), res.CreateErrors)
	if o.Stats != nil {
		fmt.Fprintf(w, "meta recorded the containers CLOSED %v after the last allocation\n", res.Settle.Round(time.Millisecond))
	}
	fmt.Fprintf(w, "heartbeats: %d in %v (%.0f/s), %d errors\n", res.Heartbeats, o.Duration, float64(res.Heartbeats)/o.Duration.Seconds(), res.HeartbeatErrors)
	fmt.Fprintf(w, "heartbeat latency: p50 %v, p99 %v, max %v\n", res.P50.Round(time.Microsecond), res.P99.Round(time.Microsecond), res.Max.Round(time.Microsecond))
	fmt.Fprintf(w, "full reports: %d, p50 %v, p99 %v\n", res.FullReports, res.FullP50.Round(time.Microsecond), res.FullP99.Round(time.Microsecond))
	if o.Restart != nil {
		fmt.Fprintf(w, "after a restart of meta: out of safe mode in %v\n", res.SafeModeExit.Round(time.Millisecond))
	}
	if res.Heartbeats > 0 {
		fmt.Fprintf(w, "cpu: %v over the measured heartbeats, %v per heartbeat (this process)\n",
			res.CPU.Round(time.Millisecond), (res.CPU / time.Duration(res.Heartbeats)).Round(time.Microsecond))
		fmt.Fprintf(w, "gc: %d collections over the measured heartbeats, %v of pauses (this process)\n",
			res.GCs, res.GCPause.Round(time.Microsecond))
	}
	for _, a := range res.Admin {
		fmt.Fprintf(w, "admin: %s in %v (median of 5, %d records)\n", a.Call, a.Took.Round(time.Microsecond), a.Records)
	}
	if o.Stats != nil {
		fmt.Fprintf(w, "replication passes: %d while measured, the last took %v\n", res.Passes, res.PassTook.Round(time.Millisecond))
		fmt.Fprintf(w, "full reports meta read: %d; not read, as they said nothing new: %d\n", res.FullRead, res.FullRepeated)
	}
	if res.Orphaned > 0 {
		fmt.Fprintf(w, "%d datanodes of a rack stopped (%d containers): DEAD after %v, every copy planned after %v (the last pass took %v)\n",
			res.Killed, res.Orphaned, res.KillDead.Round(time.Millisecond), res.KillPlanned.Round(time.Millisecond), res.KillPassTook.Round(time.Millisecond))
	}
	fmt.Fprintf(w, "go heap in use: %s, peak rss %s (this process)\n", bytesize.Format(int64(ms.HeapInuse)), bytesize.Format(res.MaxRSS))
	if proc && res.Heartbeats > 0 {
		fmt.Fprintf(w, "meta's process: cpu %v over the measured heartbeats, %v per heartbeat; %d collections; peak rss %s\n",
			res.MetaCPU.Round(time.Millisecond), (res.MetaCPU / time.Duration(res.Heartbeats)).Round(time.Microsecond), res.MetaGCs, bytesize.Format(res.MetaMaxRSS))
	}
}
