package main

// strato admin pipeline close and admin container report: what Ozone's
// `ozone admin pipeline close` and `ozone admin container report` do.

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/strato-io/strato/client"
	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

func newPipelineCloseCmd(o *cliOptions) *cobra.Command {
	var reason string
	cmd := &cobra.Command{
		Use:   "close ID [--reason TEXT]",
		Short: "Close an open pipeline and its open containers (new writes go to other pipelines); administrators only",
		Args:  exactArgs(1),
		RunE: o.action(func(s *session, args []string) error {
			id, err := strconv.ParseUint(args[0], 10, 64)
			if err != nil || id == 0 {
				return usagef("%q is not a pipeline ID (a positive number)", args[0])
			}
			resp, err := cluster(s, func(ctx context.Context, cl client.ClusterStubs) (*stratov1.ClosePipelineResponse, error) {
				return cl.ClosePipeline(ctx, &stratov1.ClosePipelineRequest{PipelineId: id, Reason: reason})
			})
			if err != nil {
				return err
			}
			if s.json {
				return printJSON(s.out, resp)
			}
			ids := make([]string, 0, len(resp.ContainerIds))
			for _, c := range resp.ContainerIds {
				ids = append(ids, strconv.FormatUint(c, 10))
			}
			if len(ids) == 0 {
				ids = []string{"none"}
			}
			_, err = fmt.Fprintf(s.out, "Pipeline %d closing; open containers closing with it: %s\n", id, strings.Join(ids, ", "))
			return err
		}),
	}
	cmd.Flags().StringVar(&reason, "reason", "an operator's request", "why, for meta's log")
	return cmd
}

// containerProblems are the problems a report lists, in order.
var containerProblems = []stratov1.ContainerProblem{
	stratov1.ContainerProblem_CONTAINER_PROBLEM_MISSING,
	stratov1.ContainerProblem_CONTAINER_PROBLEM_UNDER_REPLICATED,
	stratov1.ContainerProblem_CONTAINER_PROBLEM_UNHEALTHY,
	stratov1.ContainerProblem_CONTAINER_PROBLEM_MIS_REPLICATED,
	stratov1.ContainerProblem_CONTAINER_PROBLEM_OVER_REPLICATED,
}

// containerReport is what admin container report prints.
type containerReport struct {
	Containers int64            `json:"containers"`
	ByState    map[string]int64 `json:"by_state"`
	ByProblem  map[string]int64 `json:"by_problem"`
	// ProblemsAsOfUnixMs: when the replication pass that judged
	// ByProblem started (0: judged as the report was made).
	ProblemsAsOfUnixMs int64 `json:"problems_as_of_unix_ms"`
	// Samples are some containers of each problem (their IDs), up to
	// --samples each.
	Samples map[string][]uint64 `json:"samples"`
}

func newContainerReportCmd(o *cliOptions) *cobra.Command {
	var samples int
	cmd := &cobra.Command{
		Use:   "report [--samples N]",
		Short: "Report the containers' health: counts by state and by problem, and some containers of each problem",
		Args:  exactArgs(0),
		RunE: o.action(func(s *session, _ []string) error {
			if samples < 0 {
				return usagef("--samples %d: must be 0 or more", samples)
			}
			sum, err := clusterSummary(s)
			if err != nil {
				return err
			}
			r := containerReport{Containers: sum.GetContainers(), ByState: sum.GetContainersByState(),
				ByProblem: sum.GetContainersByProblem(), ProblemsAsOfUnixMs: sum.GetProblemsAsOfUnixMs(), Samples: map[string][]uint64{}}
			for _, p := range containerProblems {
				name := problemLabel(p)
				if samples == 0 || r.ByProblem[name] == 0 {
					continue
				}
				resp, err := cluster(s, func(ctx context.Context, cl client.ClusterStubs) (*stratov1.ListContainersResponse, error) {
					return cl.ListContainers(ctx, &stratov1.ListContainersRequest{Problems: []stratov1.ContainerProblem{p}, Limit: int32(samples)})
				})
				if err != nil {
					return err
				}
				for _, c := range resp.Containers {
					r.Samples[name] = append(r.Samples[name], c.Id)
				}
			}
			if s.json {
				return printJSON(s.out, r)
			}
			return printContainerReport(s, r)
		}),
	}
	cmd.Flags().IntVar(&samples, "samples", 10, "containers of each problem to name")
	return cmd
}

func printContainerReport(s *session, r containerReport) error {
	fields := []field{{"Containers", strconv.FormatInt(r.Containers, 10)}}
	for _, st := range slices.Sorted(maps.Keys(r.ByState)) {
		fields = append(fields, field{"  " + st, strconv.FormatInt(r.ByState[st], 10)})
	}
	fields = append(fields, field{"Problems", "as of " + problemsAsOf(r.ProblemsAsOfUnixMs)})
	for _, p := range containerProblems {
		name := problemLabel(p)
		line := strconv.FormatInt(r.ByProblem[name], 10)
		if ids := r.Samples[name]; len(ids) > 0 {
			strs := make([]string, len(ids))
			for i, id := range ids {
				strs[i] = strconv.FormatUint(id, 10)
			}
			line += " (" + strings.Join(strs, ", ")
			if int64(len(ids)) < r.ByProblem[name] {
				line += ", ..."
			}
			line += ")"
		}
		fields = append(fields, field{"  " + name, line})
	}
	return printFields(s.out, fields)
}
