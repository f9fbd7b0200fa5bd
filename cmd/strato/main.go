// Command strato is the single binary that runs every strato role: the
// metadata service, datanodes, the local development cluster, the command
// line clients and the benchmarks.
//
// This package only turns flags into Options and calls into the library
// packages; nothing else lives here.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	root := newRootCmd()
	if err := root.ExecuteContext(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "strato:", err)
		os.Exit(exitCode(err))
	}
}

func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:           "strato",
		Short:         "strato: a distributed object store and file system for big-data workloads",
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       version,
	}
	root.AddCommand(newBenchCmd())
	for _, add := range extraCommands {
		root.AddCommand(add())
	}
	return root
}

// extraCommands lets each role's file register its top-level command from
// an init function, so that roles stay in files of their own.
var extraCommands []func() *cobra.Command

// benchCommands is the same for the subcommands of `strato bench`.
var benchCommands []func() *cobra.Command

func newBenchCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Run the benchmarks that reproduce the experiments strato is measured by",
	}
	for _, add := range benchCommands {
		cmd.AddCommand(add())
	}
	return cmd
}
