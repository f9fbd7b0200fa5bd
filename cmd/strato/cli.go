package main

// The user and operator command groups (strato sh, strato fs, strato admin)
// share what is in this file: the global flags (--meta, --json,
// --timeout), the per-invocation session with its client, and the error
// contract: a command fails with exactly one line on stderr,
// "strato: <what>: <why>", exit code 2 for a usage error and 1 for
// anything else, never a raw gRPC status or a Go stack.

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/user"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/strato-io/strato/client"
	"github.com/strato-io/strato/reqid"
)

// defaultMeta is the address of a meta server started with its defaults.
const defaultMeta = "127.0.0.1:9860"

// metaEnv names the environment variable that replaces --meta's default.
const metaEnv = "STRATO_META"

// cliOptions are the flags every command of a group shares.
type cliOptions struct {
	meta        string
	tlsCA       string
	token       string
	clusterName string
	json        bool
	timeout     time.Duration
	requestID   string
	followers   bool
}

// addFlags registers the group's persistent flags on cmd.
func (o *cliOptions) addFlags(cmd *cobra.Command) {
	f := cmd.PersistentFlags()
	f.StringVar(&o.meta, "meta", defaultMeta, "meta server address(es), comma-separated; $"+metaEnv+" replaces the default")
	f.StringVar(&o.tlsCA, "tls-ca", "", "the cluster CA's certificate (ca.crt): talk TLS to meta and the datanodes; $"+tlsCAEnv+" replaces the default (none: plaintext)")
	f.StringVar(&o.token, "token", "", "token to present to meta (- reads it from standard input); default $"+client.TokenEnv+", else the one strato login stored")
	f.StringVar(&o.clusterName, "cluster", "", "a cluster of the client's file ~/.config/strato/config.toml (docs/operations.md, Configuration): its meta, tls-ca and token-file serve where --meta, --tls-ca and --token are not given; default $"+clusterEnv+", else the file's default")
	f.BoolVar(&o.json, "json", false, "machine-readable output: one JSON document (records as objects, lists as arrays; 64-bit numbers as numbers, enum values as the tables print them: docs/cli.md)")
	f.DurationVar(&o.timeout, "timeout", time.Minute, "give up after this long (data commands: until the transfer starts)")
	f.BoolVar(&o.followers, "follower-reads", false, "send read-only calls to any meta replica, not only the leader (linearizable: ReadIndex through the leader; docs/decisions/0087-follower-reads.md)")
	f.StringVar(&o.requestID, "request-id", "", "name the command's calls to meta and the datanodes by this request ID (up to 64 printable ASCII characters): meta's audit log and the datanodes' logs record it (docs/observability.md)")
}

// metaAddrs returns the meta addresses: --meta when given, else
// $STRATO_META or the cluster's (chosenCluster.setting), else the default.
func metaAddrs(cmd *cobra.Command, cl chosenCluster) ([]string, error) {
	s := cl.setting(cmd, "meta", metaEnv, strings.Join(cl.Meta, ","))
	var addrs []string
	for _, a := range strings.Split(s, ",") {
		if a = strings.TrimSpace(a); a != "" {
			addrs = append(addrs, a)
		}
	}
	if len(addrs) == 0 {
		return nil, usagef("--meta: no address given")
	}
	return addrs, nil
}

// session is one invocation of a command: its context, client and output.
type session struct {
	ctx   context.Context
	cmd   *cobra.Command
	c     *client.Client
	json  bool
	out   io.Writer
	in    io.Reader
	addrs []string
	tls   *tls.Config // nil: plaintext
	token string      // what the client presents ("": none)
	timer *time.Timer
}

// transferStarted stops the --timeout clock: data commands are bounded
// only until their key is open, not for the length of the transfer.
func (s *session) transferStarted() {
	if s.timer != nil {
		s.timer.Stop()
	}
}

// timeoutError is the cause of a context ended by --timeout.
type timeoutError struct{ d time.Duration }

func (e timeoutError) Error() string { return fmt.Sprintf("timed out after %v", e.d) }

// action wraps a command's body: it opens a client of the meta group,
// bounds the work by --timeout, and turns the body's error into the
// command's one-line error.
// connect makes the client a command's flags, environment and cluster
// file name, with what it was made from.
func (o *cliOptions) connect(cmd *cobra.Command) (c *client.Client, addrs []string, tlsConfig *tls.Config, tok string, err error) {
	cl, err := o.cluster()
	if err != nil {
		return nil, nil, nil, "", err
	}
	if addrs, err = metaAddrs(cmd, cl); err != nil {
		return nil, nil, nil, "", err
	}
	if tlsConfig, err = caTLS(cl.setting(cmd, "tls-ca", tlsCAEnv, cl.TLSCA)); err != nil {
		return nil, nil, nil, "", err
	}
	if tok, err = cl.token(cmd, o.token); err != nil {
		return nil, nil, nil, "", err
	}
	c, err = client.New(client.Options{
		Meta:    addrs,
		TLS:     tlsConfig,
		Token:   tok,
		NoToken: tok == "",
		Owner:   currentUser(),
		Logger:  slog.New(slog.DiscardHandler),

		FollowerReads: o.followers,
	})
	return c, addrs, tlsConfig, tok, err
}

func (o *cliOptions) action(fn func(s *session, args []string) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		what := describeCommand(cmd, args)
		if o.requestID != "" && !reqid.Valid(o.requestID) {
			return failure(what, usagef("--request-id %q: want 1 to %d printable ASCII characters, no spaces", o.requestID, reqid.MaxLen))
		}
		if err := o.resolveURIs(cmd, args); err != nil {
			return failure(what, err)
		}
		c, addrs, tlsConfig, tok, err := o.connect(cmd)
		if err != nil {
			return failure(what, err)
		}
		defer func() { _ = c.Close() }()

		parent := cmd.Context()
		if parent == nil {
			parent = context.Background()
		}
		ctx, cancel := context.WithCancelCause(client.WithRequestID(parent, o.requestID))
		defer cancel(nil)
		s := &session{ctx: ctx, cmd: cmd, c: c, json: o.json, out: cmd.OutOrStdout(), in: cmd.InOrStdin(), addrs: addrs, tls: tlsConfig, token: tok}
		if o.timeout > 0 {
			s.timer = time.AfterFunc(o.timeout, func() { cancel(timeoutError{o.timeout}) })
			defer s.timer.Stop()
		}
		if err := fn(s, args); err != nil {
			if isUsage(err) {
				return failure(what, err)
			}
			return failure(what, explain(ctx, addrs, err))
		}
		return nil
	}
}

// describeCommand names what failed: the command below its group and its
// arguments, e.g. "volume create vol1" or "ls /vol/bkt/dir".
func describeCommand(cmd *cobra.Command, args []string) string {
	path := strings.Fields(cmd.CommandPath())
	switch {
	case len(path) > 2:
		path = path[2:] // drop "strato" and the group
	case len(path) == 2:
		path = path[1:] // the group itself
	}
	return strings.Join(append(path, args...), " ")
}

// currentUser is the owner recorded on what the CLI creates, as HDFS
// records the caller's user name.
func currentUser() string {
	if u := os.Getenv("USER"); u != "" {
		return u
	}
	if u, err := user.Current(); err == nil && u.Username != "" {
		return u.Username
	}
	return "strato"
}

// ---- Errors ---------------------------------------------------------------------

// cliError is a command's failure, already worded for the user.
type cliError struct {
	msg   string
	usage bool // exit code 2
}

func (e *cliError) Error() string { return e.msg }

// usagef returns a usage error: the command line itself is wrong.
func usagef(format string, a ...any) error {
	return &cliError{msg: fmt.Sprintf(format, a...), usage: true}
}

// isUsage reports whether err says the command line was wrong.
func isUsage(err error) bool {
	var ce *cliError
	return errors.As(err, &ce) && ce.usage || errors.Is(err, client.ErrInvalidPath)
}

// failure prefixes err with what failed, keeping one line.
func failure(what string, err error) error {
	usage := isUsage(err)
	msg := oneLine(stripPrefixes(err.Error()))
	if what != "" {
		msg = what + ": " + msg
	}
	return &cliError{msg: msg, usage: usage}
}

// exitCode is the process's exit code for an error a command returned: 2
// when the command line was wrong, 1 otherwise.
func exitCode(err error) int {
	var ce *cliError
	if errors.As(err, &ce) && ce.usage {
		return 2
	}
	return 1
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", "; ")), " ")
}

// explain words an error from the client for a user: gRPC statuses become
// plain words followed by the server's message, which names the rule; a
// timeout or an interruption says so; package prefixes go.
func explain(ctx context.Context, addrs []string, err error) error {
	var ce *cliError
	if errors.As(err, &ce) {
		return err
	}
	var detail string
	if st := findStatus(err); st != nil {
		detail = explainStatus(st, addrs)
		// Keep any context the client wrapped around the status.
		if outer := err.Error(); strings.Contains(outer, st.Err().Error()) && !strings.Contains(outer, "\n") {
			detail = strings.Replace(outer, st.Err().Error(), detail, 1)
		}
	} else {
		detail = err.Error()
	}
	detail = stripPrefixes(detail)
	if ctx.Err() != nil {
		var te timeoutError
		cause := context.Cause(ctx)
		switch {
		case errors.As(cause, &te):
			if findStatus(err) == nil {
				return errors.New(te.Error())
			}
			return fmt.Errorf("%s: %s", te.Error(), detail)
		case errors.Is(cause, context.Canceled):
			return errors.New("interrupted")
		}
	}
	return errors.New(detail)
}

// findStatus returns the gRPC status inside err (a joined or wrapped
// error included), or nil.
func findStatus(err error) *status.Status {
	var gs interface{ GRPCStatus() *status.Status }
	if errors.As(err, &gs) {
		if st := gs.GRPCStatus(); st != nil && st.Code() != codes.OK {
			return st
		}
	}
	return nil
}

// plainWords says what a gRPC code means to a user.
var plainWords = map[codes.Code]string{
	codes.NotFound:           "not found",
	codes.AlreadyExists:      "already exists",
	codes.FailedPrecondition: "", // the server's message says which rule
	codes.InvalidArgument:    "invalid",
	codes.PermissionDenied:   "permission denied",
	codes.Unauthenticated:    "not authenticated",
	codes.ResourceExhausted:  "too large or too many requests",
	codes.Unimplemented:      "not supported by this meta server",
	codes.Unavailable:        "unavailable",
	codes.DeadlineExceeded:   "timed out",
	codes.Canceled:           "canceled",
	codes.Aborted:            "aborted, try again",
	codes.OutOfRange:         "out of range",
	codes.Internal:           "internal error on the server",
	codes.Unknown:            "unknown error",
	codes.DataLoss:           "data loss on the server",
}

func explainStatus(st *status.Status, addrs []string) string {
	msg := stripPrefixes(st.Message())
	if st.Code() == codes.Unavailable {
		if reason, ok := connectionFailure(st.Message()); ok {
			return fmt.Sprintf("cannot reach meta at %s: %s", strings.Join(addrs, ","), reason)
		}
	}
	plain := plainWords[st.Code()]
	switch {
	case msg == "" && plain == "":
		return strings.ToLower(st.Code().String())
	case msg == "":
		return plain
	case plain == "" || strings.Contains(strings.ToLower(msg), plain):
		return msg
	}
	return plain + ": " + msg
}

// connectionFailure recognises a transport error (the call never reached
// a server) and returns its last, most specific part, e.g. "connection
// refused".
func connectionFailure(msg string) (string, bool) {
	if !strings.Contains(msg, "connection error") && !strings.Contains(msg, "transport:") &&
		!strings.Contains(msg, "name resolver") && !strings.Contains(msg, "dial tcp") {
		return "", false
	}
	m := strings.Trim(msg, `"`)
	if i := strings.LastIndex(m, ": "); i >= 0 {
		m = m[i+2:]
	}
	return strings.Trim(m, `" `), true
}

// stripPrefixes removes the package prefixes of library errors
// ("namespace: ", "client: ", ...), which mean nothing to a user.
func stripPrefixes(s string) string {
	for _, p := range []string{"namespace: ", "cluster: ", "meta: ", "client: ", "consensus: ", "wire: ", "datanode: "} {
		s = strings.ReplaceAll(s, p, "")
	}
	return s
}

// ---- Command tree helpers ------------------------------------------------------

// group returns a command that only holds subcommands: without arguments
// it shows its help, and an unknown subcommand is a usage error (cobra
// would print the help and succeed).
func group(use, short string) *cobra.Command {
	return &cobra.Command{
		Use:   use,
		Short: short,
		Args:  cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return cmd.Help()
			}
			return usagef("%s: unknown command %q (see %s --help)", describeCommand(cmd, nil), args[0], cmd.CommandPath())
		},
	}
}

// topGroup is a group with the shared flags; flag errors anywhere below it
// are usage errors.
func topGroup(use, short string, o *cliOptions) *cobra.Command {
	cmd := group(use, short)
	o.addFlags(cmd)
	cmd.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return usagef("%s: %s (see %s --help)", describeCommand(c, nil), err.Error(), c.CommandPath())
	})
	return cmd
}

// argsBetween checks the count of positional arguments.
func argsBetween(lo, hi int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) >= lo && len(args) <= hi {
			return nil
		}
		want := fmt.Sprintf("%d", lo)
		switch {
		case hi != lo && hi < 1<<20:
			want = fmt.Sprintf("%d to %d", lo, hi)
		case hi != lo:
			want = fmt.Sprintf("at least %d", lo)
		}
		return usagef("%s: want %s argument(s), got %d (usage: %s)", describeCommand(cmd, nil), want, len(args), cmd.UseLine())
	}
}

func exactArgs(n int) cobra.PositionalArgs { return argsBetween(n, n) }
