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

	"github.com/strato-io/strato/internal/buildinfo"
)

// version is this build's version (buildinfo: stamped by make build and
// make dist, "dev" for a plain go build outside a git checkout).
var version = buildinfo.Get().Version

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	root := newRootCmd()
	if err := root.ExecuteContext(ctx); err != nil {
		if msg := err.Error(); msg != "" { // fs test's "false" says nothing
			fmt.Fprintln(os.Stderr, "strato:", msg)
		}
		os.Exit(exitCode(err))
	}
}

func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:           "strato",
		Short:         "strato: a distributed object store and file system for big-data workloads",
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       buildinfo.Get().String(),
	}
	root.SetVersionTemplate("{{.Version}}\n")
	root.AddCommand(newBenchCmd(), newVersionCmd())
	for _, add := range extraCommands {
		root.AddCommand(add())
	}
	usageErrors(root)
	return root
}

// usageErrors makes every command line cobra rejects a usage error (exit
// code 2, as the README promises): an unknown flag anywhere (a group that
// words its own keeps it) and an unknown subcommand of the root or of any
// command that only holds subcommands, which cobra would report with exit
// code 1, or answer with its help and exit code 0.
func usageErrors(root *cobra.Command) {
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return usagef("%s (see %s --help)", err.Error(), c.CommandPath())
	})
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.HasSubCommands() && c.Run == nil && c.RunE == nil {
			c.Args = cobra.ArbitraryArgs
			c.RunE = func(cmd *cobra.Command, args []string) error {
				if len(args) == 0 {
					return cmd.Help()
				}
				return usagef("unknown command %q for %q (see %s --help)", args[0], cmd.CommandPath(), cmd.CommandPath())
			}
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

// newVersionCmd is `strato version`: the build's version, commit, the
// commit's date and the Go toolchain, as --version prints them.
func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print strato's version, the commit it was built from, its date and the Go toolchain",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := fmt.Fprintln(cmd.OutOrStdout(), buildinfo.Get().String())
			return err
		},
	}
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
