package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/strato-io/strato/bytesize"
	"github.com/strato-io/strato/client"
	"github.com/strato-io/strato/proto/strato/v1"
)

// newDiskBalancerCmd is strato admin datanode diskbalancer: start, stop and
// follow a datanode's disk balancer, which moves closed containers from
// its fuller volumes to its emptier ones.
func newDiskBalancerCmd(o *cliOptions) *cobra.Command {
	cmd := group("diskbalancer", "Even out the volumes of one datanode: closed containers move from its fuller disks to its emptier ones")
	var threshold, bandwidth string
	start := &cobra.Command{
		Use:   "start ID",
		Short: "Start a datanode's disk balancer (it stops itself once every volume is within the threshold)",
		Long: `start asks the datanode, through meta, to move CLOSED containers from its
volumes above the mean used fraction of capacity by more than --threshold to
those below it. Each move copies the container to the other volume, checks
every chunk against its checksums, serves it from there, and deletes the old
copy a grace period later, so that reads are not disturbed. Open containers
stay. The datanode starts with its next heartbeat; follow it with
strato admin datanode diskbalancer status ID.`,
		Args: exactArgs(1),
		RunE: o.action(func(s *session, args []string) error {
			frac, err := parseThreshold(threshold)
			if err != nil {
				return err
			}
			bw, err := parseBandwidth(bandwidth)
			if err != nil {
				return err
			}
			return sendDiskBalancer(s, args[0], &stratov1.DiskBalancerCommand{Threshold: frac, Bandwidth: bw},
				fmt.Sprintf("disk balancer starts with its next heartbeat (threshold %s%%, %s)",
					strconv.FormatFloat(frac*100, 'f', -1, 64), bandwidthLabel(bw)))
		}),
	}
	start.Flags().StringVar(&threshold, "threshold", "10%", "a volume is balanced within this many points of the datanode's mean used fraction of capacity (\"10%\", or 10)")
	start.Flags().StringVar(&bandwidth, "bandwidth", "64MiB", "bytes per second the moves read and write, on average (0: no cap)")
	stop := &cobra.Command{
		Use:   "stop ID",
		Short: "Stop a datanode's disk balancer: the move under way is abandoned, those done stay",
		Args:  exactArgs(1),
		RunE: o.action(func(s *session, args []string) error {
			return sendDiskBalancer(s, args[0], &stratov1.DiskBalancerCommand{Stop: true}, "disk balancer stops with its next heartbeat")
		}),
	}
	status := &cobra.Command{
		Use:   "status ID|HOSTNAME|ADDRESS",
		Short: "Show a datanode's disk balancer (as its last heartbeat told) and its volumes",
		Args:  exactArgs(1),
		RunE: o.action(func(s *session, args []string) error {
			d, err := findDatanode(s, args[0])
			if err != nil {
				return err
			}
			st := d.GetStats()
			if s.json {
				return printDiskBalancerJSON(s, d)
			}
			if err := printFields(s.out, diskBalancerFields(st.GetDiskBalancer())); err != nil {
				return err
			}
			fmt.Fprintln(s.out)
			return printTable(s.out, volumeHeader, volumeRows(st.GetVolumeStats()))
		}),
	}
	cmd.AddCommand(start, stop, status)
	return cmd
}

// printDiskBalancerJSON prints {"datanode", "diskBalancer" (null before
// its first run), "volumes"}.
func printDiskBalancerJSON(s *session, d *stratov1.DatanodeInfo) error {
	out := struct {
		Datanode     string          `json:"datanode"`
		DiskBalancer json.RawMessage `json:"diskBalancer"`
		Volumes      json.RawMessage `json:"volumes"`
	}{Datanode: d.GetDetails().GetId(), DiskBalancer: json.RawMessage("null")}
	var err error
	if st := d.GetStats().GetDiskBalancer(); st != nil {
		if out.DiskBalancer, err = cliJSON(st); err != nil {
			return err
		}
	}
	if out.Volumes, err = marshalArray(messages(d.GetStats().GetVolumeStats())); err != nil {
		return err
	}
	return printJSON(s.out, out)
}

// sendDiskBalancer sends cmd to datanode id through meta and says what
// happens next.
func sendDiskBalancer(s *session, id string, cmd *stratov1.DiskBalancerCommand, what string) error {
	resp, err := cluster(s, func(ctx context.Context, cl client.ClusterStubs) (*stratov1.DiskBalancerResponse, error) {
		return cl.DiskBalancer(ctx, &stratov1.DiskBalancerRequest{DatanodeId: id, Command: cmd})
	})
	if err != nil {
		return err
	}
	if s.json {
		return printJSON(s.out, resp.GetDatanode())
	}
	_, err = fmt.Fprintf(s.out, "%s: %s; see strato admin datanode diskbalancer status %s\n", id, what, id)
	return err
}

// bandwidthLabel prints a cap in bytes/s: a command's -1 and the stats'
// 0 are no cap.
func bandwidthLabel(bw int64) string {
	if bw <= 0 {
		return "no bandwidth cap"
	}
	return bytesize.Format(bw) + "/s"
}

// diskBalancerLabel sums up a datanode's disk balancer for datanode info.
func diskBalancerLabel(st *stratov1.DiskBalancerStats) string {
	switch {
	case st == nil:
		return "not run since the datanode started"
	case st.GetRunning():
		return fmt.Sprintf("running: %d containers (%s) moved, spread %s → %s", st.GetContainersMoved(),
			bytesize.Format(st.GetBytesMoved()), pct(st.GetSpreadStart()), pct(st.GetSpreadNow()))
	}
	return fmt.Sprintf("%s, %s: %d containers (%s) moved, spread %s → %s", st.GetResult(), timeMs(st.GetFinishedUnixMs()),
		st.GetContainersMoved(), bytesize.Format(st.GetBytesMoved()), pct(st.GetSpreadStart()), pct(st.GetSpreadNow()))
}

// diskBalancerFields are the status command's fields.
func diskBalancerFields(st *stratov1.DiskBalancerStats) []field {
	if st == nil {
		return []field{{"State", "not run since the datanode started"}}
	}
	state, finished := "running", "-"
	if !st.GetRunning() {
		state, finished = "ended: "+st.GetResult(), timeMs(st.GetFinishedUnixMs())
	}
	lastErr := st.GetLastError()
	if lastErr == "" {
		lastErr = "-"
	}
	return []field{
		{"State", state},
		{"Threshold", pct(st.GetThreshold())},
		{"Bandwidth", bandwidthLabel(st.GetBandwidth())},
		{"Started", timeMs(st.GetStartedUnixMs())},
		{"Finished", finished},
		{"Containers moved", strconv.FormatInt(st.GetContainersMoved(), 10)},
		{"Bytes moved", sizeWithBytes(st.GetBytesMoved())},
		{"Moves failed", strconv.FormatInt(st.GetMovesFailed(), 10)},
		{"Last error", lastErr},
		{"Spread at start", pct(st.GetSpreadStart())},
		{"Spread now", pct(st.GetSpreadNow())},
		{"Left to move", sizeWithBytes(st.GetBytesLeft())},
	}
}
