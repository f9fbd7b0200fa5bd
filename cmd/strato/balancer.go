package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/strato-io/strato/bytesize"
	"github.com/strato-io/strato/client"
	"github.com/strato-io/strato/proto/strato/v1"
)

// newBalancerCmd is strato admin balancer: the container balancer
// (docs/operations.md "Balancing datanodes").
func newBalancerCmd(o *cliOptions) *cobra.Command {
	cmd := group("balancer", "Move closed containers from over- to under-used datanodes until each is within a threshold of the mean")
	var threshold, maxSize, bandwidth string
	var noYield bool
	start := &cobra.Command{
		Use:   "start",
		Short: "Start the container balancer (it stops itself once every datanode is within the threshold)",
		Long: `start starts meta's container balancer. While it runs, meta's replication
pass moves closed containers (replicated ones and erasure coded indexes)
from datanodes whose used fraction of capacity is above the cluster's mean
by more than --threshold to those below it: each move copies the container
to the target, which verifies and reports it, and only then drops the
source's replica. Moves keep the rack rules and share the replication
limits, after repairs. It works in iterations of at most
--max-size-per-iteration bytes, and stops itself once every datanode is
within the threshold, or when nothing more can move. Its state is kept
through Raft: a new meta leader resumes it.

Moves give way to clients: a datanode that has served a client request in
the last quarter second holds its moves back (at least one 8 MiB frame every 5
seconds still goes), on the sending and the receiving side, so that the
balancer takes the time the clients leave. --no-yield makes the moves send
at --bandwidth whatever the clients do.`,
		Args: exactArgs(0),
		RunE: o.action(func(s *session, _ []string) error {
			req, err := balancerRequest(threshold, maxSize, bandwidth)
			if err != nil {
				return err
			}
			req.NoYield = noYield
			st, err := cluster(s, func(ctx context.Context, cl client.ClusterStubs) (*stratov1.BalancerStatus, error) {
				return cl.StartBalancer(ctx, req)
			})
			if err != nil {
				return err
			}
			return printBalancer(s, st)
		}),
	}
	start.Flags().StringVar(&threshold, "threshold", "10%", "a datanode is balanced within this many points of the mean used fraction of capacity (\"10%\", or 10)")
	start.Flags().StringVar(&maxSize, "max-size-per-iteration", "500GiB", "the most bytes one iteration moves")
	start.Flags().BoolVar(&noYield, "no-yield", false, "send at the bandwidth even while the datanodes serve clients (default: give way to them)")
	start.Flags().StringVar(&bandwidth, "bandwidth", "100MiB", "bytes per second each source datanode sends for the balancer, on average (0: no cap)")
	stop := &cobra.Command{
		Use:   "stop",
		Short: "Stop the container balancer (no move starts; those under way finish)",
		Args:  exactArgs(0),
		RunE: o.action(func(s *session, _ []string) error {
			st, err := cluster(s, func(ctx context.Context, cl client.ClusterStubs) (*stratov1.BalancerStatus, error) {
				return cl.StopBalancer(ctx, &stratov1.StopBalancerRequest{})
			})
			if err != nil {
				return err
			}
			return printBalancer(s, st)
		}),
	}
	status := &cobra.Command{
		Use:   "status",
		Short: "Show whether the balancer runs, what it moved, what is left, and the spread of the datanodes' use before and now",
		Args:  exactArgs(0),
		RunE: o.action(func(s *session, _ []string) error {
			st, err := cluster(s, func(ctx context.Context, cl client.ClusterStubs) (*stratov1.BalancerStatus, error) {
				return cl.GetBalancerStatus(ctx, &stratov1.GetBalancerStatusRequest{})
			})
			if err != nil {
				return err
			}
			return printBalancer(s, st)
		}),
	}
	cmd.AddCommand(start, stop, status)
	return cmd
}

// balancerRequest turns the start flags into a request.
func balancerRequest(threshold, maxSize, bandwidth string) (*stratov1.StartBalancerRequest, error) {
	frac, err := parseThreshold(threshold)
	if err != nil {
		return nil, err
	}
	size, err := bytesize.Parse(maxSize)
	if err != nil || size <= 0 {
		return nil, usagef("--max-size-per-iteration %q is not a positive byte count such as 500GiB", maxSize)
	}
	bw, err := parseBandwidth(bandwidth)
	if err != nil {
		return nil, err
	}
	return &stratov1.StartBalancerRequest{Threshold: frac, MaxSizePerIteration: size, Bandwidth: bw}, nil
}

// parseThreshold turns a --threshold percentage ("10%" or 10) into a
// fraction.
func parseThreshold(threshold string) (float64, error) {
	pct, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(threshold), "%"), 64)
	if err != nil || pct <= 0 || pct >= 100 {
		return 0, usagef("--threshold %q is not a percentage between 0 and 100 such as 10%%", threshold)
	}
	return pct / 100, nil
}

// parseBandwidth turns a --bandwidth byte count per second into what the
// requests take: 0 ("no cap") becomes -1, as their 0 is the default.
func parseBandwidth(bandwidth string) (int64, error) {
	bw, err := bytesize.Parse(strings.TrimSuffix(bandwidth, "/s"))
	if err != nil || bw < 0 {
		return 0, usagef("--bandwidth %q is not a byte count such as 100MiB", bandwidth)
	}
	if bw == 0 {
		bw = -1
	}
	return bw, nil
}

// printBalancer prints a balancer's status: the record, then a table of
// the datanodes' use.
func printBalancer(s *session, st *stratov1.BalancerStatus) error {
	if s.json {
		return printJSON(s.out, st)
	}
	state := "never started"
	switch {
	case st.Running:
		state = "running"
	case st.StartedUnixMs != 0:
		state = "not running (" + st.Outcome + ")"
	}
	bw := "no cap"
	if st.Bandwidth > 0 {
		bw = bytesize.Format(st.Bandwidth) + "/s per source"
	}
	fields := []field{{"Balancer", state}}
	if st.StartedUnixMs != 0 {
		fields = append(fields,
			field{"Threshold", pct(st.Threshold)},
			field{"Max size per iteration", bytesize.Format(st.MaxSizePerIteration)},
			field{"Bandwidth", bw},
			field{"Gives way to clients", strconv.FormatBool(!st.NoYield)},
			field{"Started", timeMs(st.StartedUnixMs)},
			field{"Stopped", timeMs(st.StoppedUnixMs)},
			field{"Iterations done", strconv.FormatUint(st.Iterations, 10)},
			field{"Moved", fmt.Sprintf("%d containers, %s", st.MovedContainers, bytesize.Format(int64(st.MovedBytes)))},
			field{"Spread before", pct(st.SpreadBefore)})
		if !st.Running {
			fields = append(fields, field{"Spread after", pct(st.SpreadAfter)})
		}
	}
	fields = append(fields,
		field{"In flight", fmt.Sprintf("%d moves, %s", st.MovesInFlight, bytesize.Format(st.BytesInFlight))},
		field{"Left to move", bytesize.Format(st.BytesLeft)},
		field{"Mean use", pct(st.Mean)},
		field{"Spread now", pct(st.Spread)})
	if err := printFields(s.out, fields); err != nil {
		return err
	}
	rows := make([][]string, 0, len(st.Datanodes))
	for _, d := range st.Datanodes {
		rows = append(rows, []string{d.Id, bytesize.Format(d.Used), bytesize.Format(d.Capacity), fmt.Sprintf("%.1f%%", 100*d.Utilization), strings.ToUpper(d.Class)})
	}
	if len(rows) == 0 {
		return nil
	}
	fmt.Fprintln(s.out)
	return printTable(s.out, []string{"DATANODE", "USED", "CAPACITY", "USE", "CLASS"}, rows)
}
