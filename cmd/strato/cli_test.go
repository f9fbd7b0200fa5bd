package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/strato-io/strato/bytesize"
	"github.com/strato-io/strato/meta"
	"github.com/strato-io/strato/meta/consensus"
	"github.com/strato-io/strato/minicluster"
)

// cliHarness runs the strato command line in process against a real meta
// server on loopback.
type cliHarness struct {
	t    *testing.T
	addr string
	s3   string // the S3 gateway's endpoint, when the cluster runs one
}

// startMeta starts a single-voter meta server (metaCluster) and returns a
// harness for it.
func startMeta(t *testing.T) *cliHarness {
	t.Helper()
	return &cliHarness{t: t, addr: metaCluster(t).MetaAddr()}
}

// metaCluster starts meta alone (a minicluster without datanodes) with
// quick elections and ticks on a new directory, until the test ends.
func metaCluster(t *testing.T) *minicluster.Cluster {
	t.Helper()
	c, err := minicluster.Start(t.Context(), minicluster.Options{Dir: t.TempDir(), MetaOnly: true,
		TickInterval: 50 * time.Millisecond, ConfigureMeta: func(_ int, o *meta.Options) {
			o.Raft = consensus.Options{TickInterval: 10 * time.Millisecond, ElectionTicks: 10, HeartbeatTicks: 1}
		}})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, c.Close()) })
	return c
}

// result is what one invocation printed and its exit code.
type result struct {
	stdout, stderr string
	code           int
}

// execute runs `strato ARGS...` as main does: the root command, then the
// error line and exit code main would print and use.
func execute(stdin io.Reader, args ...string) result {
	root := newRootCmd()
	var out, errOut bytes.Buffer
	root.SetArgs(args)
	root.SetOut(&out)
	root.SetErr(&errOut)
	if stdin != nil {
		root.SetIn(stdin)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	code := 0
	if err := root.ExecuteContext(ctx); err != nil {
		if msg := err.Error(); msg != "" {
			fmt.Fprintln(&errOut, "strato:", msg)
		}
		code = exitCode(err)
	}
	return result{stdout: out.String(), stderr: errOut.String(), code: code}
}

// run runs a command against the harness's meta server.
func (h *cliHarness) run(args ...string) result {
	return execute(nil, append(args, "--meta", h.addr)...)
}

// ok runs a command that must succeed silently on stderr and returns its
// stdout.
func (h *cliHarness) ok(args ...string) string {
	h.t.Helper()
	r := h.run(args...)
	require.Equal(h.t, 0, r.code, "strato %s: %s", strings.Join(args, " "), r.stderr)
	require.Empty(h.t, r.stderr, "strato %s", strings.Join(args, " "))
	return r.stdout
}

// fail runs a command that must fail with code and exactly one clear line
// on stderr, which it returns.
func (h *cliHarness) fail(code int, args ...string) string {
	h.t.Helper()
	return requireFailure(h.t, h.run(args...), code, args)
}

func requireFailure(t *testing.T, r result, code int, args []string) string {
	t.Helper()
	cmdline := "strato " + strings.Join(args, " ")
	require.Equal(t, code, r.code, "%s: exit code (stderr %q)", cmdline, r.stderr)
	require.True(t, strings.HasSuffix(r.stderr, "\n"), "%s: stderr %q", cmdline, r.stderr)
	line := strings.TrimSuffix(r.stderr, "\n")
	require.NotContains(t, line, "\n", "%s: one line on stderr", cmdline)
	require.True(t, strings.HasPrefix(line, "strato: "), "%s: %q", cmdline, line)
	for _, bad := range []string{"rpc error", "code =", "desc =", "goroutine ", "panic", "namespace: ", "Usage:"} {
		require.NotContains(t, line, bad, "%s: %q", cmdline, line)
	}
	return line
}

// jsonOf decodes a --json document.
func jsonOf[T any](t *testing.T, s string) T {
	t.Helper()
	var v T
	require.NoError(t, json.Unmarshal([]byte(s), &v), "not JSON: %s", s)
	return v
}

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{
		"0": 0, "1048576": 1 << 20, "512k": 512 << 10, "10GB": 10 << 30, "10G": 10 << 30, "10gib": 10 << 30,
		"1TiB": 1 << 40, "1.5g": 3 << 29, "4 MiB": 4 << 20, "": -1, "-1": -1, "10XB": -1, "g": -1, "1x": -1,
		"9999999999999999999": -1, "8E": -1,
	} {
		got, err := parseSize("quota-bytes", in)
		if want < 0 {
			require.Error(t, err, "%q", in)
			require.Equal(t, 2, exitCode(err), "%q: a usage error", in)
			continue
		}
		require.NoError(t, err, "%q", in)
		require.Equal(t, want, got, "%q", in)
	}
}

func TestHumanSize(t *testing.T) {
	for n, want := range map[int64]string{
		0: "0 B", 1023: "1023 B", 1024: "1 KiB", 1536: "1.5 KiB", 3 << 29: "1.5 GiB", 10 << 40: "10 TiB",
	} {
		require.Equal(t, want, bytesize.Format(n), "%d", n)
	}
}

func TestUsageErrors(t *testing.T) {
	h := startMeta(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"sh", "volume", "list", "--bogus"}, "unknown flag: --bogus"},
		{[]string{"fs", "ls", "-Z", "/"}, "unknown shorthand flag: 'Z'"},
		{[]string{"sh", "volume", "info"}, "want 1 argument(s), got 0"},
		{[]string{"sh", "volume", "bogus"}, `unknown command "bogus"`},
		{[]string{"admin", "bogus"}, `strato: admin: unknown command "bogus" (see strato admin --help)`},
		{[]string{"sh", "--bogus"}, "strato: sh: unknown flag: --bogus (see strato sh --help)"},
		{[]string{"admin", "datanode", "list", "extra"}, "strato: datanode list: want 0 argument(s), got 1 (usage: strato admin datanode list [flags])"},
		{[]string{"sh", "bucket", "create", "/vol"}, "names no bucket"},
		{[]string{"sh", "bucket", "create", "/vol/bkt/extra"}, "is not a bucket"},
		{[]string{"sh", "bucket", "create", "/vol/bkt", "--layout", "XYZ"}, `--layout: "XYZ" is not one of FSO, OBS`},
		{[]string{"sh", "bucket", "create", "/vol/bkt", "--replication", "TWO"}, "--replication"},
		{[]string{"sh", "bucket", "create", "/vol/bkt", "--checksum", "crc64"}, "--checksum"},
		{[]string{"sh", "volume", "create", "vol", "--quota-bytes", "lots"}, "--quota-bytes"},
		{[]string{"sh", "key", "info", "/vol/bkt"}, "names no key"},
		{[]string{"sh", "key", "list", "/vol/bkt", "--delimiter", "ab"}, "--delimiter"},
		{[]string{"fs", "mv", "/vol/a/x", "/vol/b/x"}, "rename across buckets"},
		{[]string{"fs", "rm", "/vol/bkt"}, "bucket's root"},
		{[]string{"admin", "container", "info", "x1"}, "not a container ID"},
		{[]string{"admin", "datanode", "list", "--timeout", "soon"}, "--timeout"},
		{[]string{"sh", "volume", "list", "--request-id", "two words"}, "--request-id"},
	} {
		line := h.fail(2, tc.args...)
		require.Contains(t, line, tc.want, "strato %s", strings.Join(tc.args, " "))
	}
}

func TestErrorsAreOneLine(t *testing.T) {
	h := startMeta(t)
	h.ok("sh", "volume", "create", "vol")
	h.ok("sh", "bucket", "create", "/vol/bkt")
	h.ok("fs", "mkdir", "/vol/bkt/dir")

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"sh", "volume", "info", "nosuch"}, "strato: volume info nosuch: volume not found: nosuch"},
		{[]string{"sh", "volume", "create", "vol"}, "strato: volume create vol: volume already exists: vol"},
		{[]string{"sh", "bucket", "create", "/nosuch/bkt"}, "strato: bucket create /nosuch/bkt: volume not found: nosuch"},
		{[]string{"sh", "bucket", "create", "/vol/Bad_Name"}, `strato: bucket create /vol/Bad_Name: invalid name: bucket "Bad_Name": may contain only lowercase letters, digits, hyphens and periods`},
		{[]string{"sh", "bucket", "delete", "/vol/bkt"}, "strato: bucket delete /vol/bkt: bucket not empty: vol/bkt has 1 keys and directories"},
		{[]string{"sh", "volume", "delete", "vol"}, "strato: volume delete vol: volume not empty: vol has 1 buckets"},
		{[]string{"sh", "key", "info", "/vol/bkt/nokey"}, "not found"},
		{[]string{"fs", "ls", "/vol/nob"}, "strato: ls /vol/nob: bucket not found: vol/nob"},
		{[]string{"fs", "mkdir", "/vol/bkt/dir"}, "strato: mkdir /vol/bkt/dir: already exists"},
		{[]string{"admin", "container", "info", "77"}, "strato: container info 77: not found: container 77"},
		{[]string{"admin", "datanode", "info", "dn-x"}, `datanode not found`},
	} {
		line := h.fail(1, tc.args...)
		if strings.HasPrefix(tc.want, "strato: ") {
			require.Equal(t, tc.want, line)
		} else {
			require.Contains(t, line, tc.want)
		}
	}
}

func TestUnreachableMeta(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := lis.Addr().String()
	require.NoError(t, lis.Close()) // nothing listens there now

	start := time.Now()
	args := []string{"sh", "volume", "list", "--meta", addr, "--timeout", "300ms"}
	line := requireFailure(t, execute(nil, args...), 1, args)
	require.Less(t, time.Since(start), 5*time.Second)
	require.Equal(t, "strato: volume list: timed out after 300ms: cannot reach meta at "+addr+": connection refused", line)
}

func TestMetaFromEnvironment(t *testing.T) {
	h := startMeta(t)
	t.Setenv(metaEnv, h.addr)
	r := execute(nil, "sh", "volume", "create", "envvol")
	require.Equal(t, 0, r.code, r.stderr)
	r = execute(nil, "sh", "volume", "list")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "envvol")

	// --meta wins over the environment.
	t.Setenv(metaEnv, "127.0.0.1:1")
	require.Contains(t, h.ok("sh", "volume", "list"), "envvol")
}

func TestGroupWithoutCommandShowsHelp(t *testing.T) {
	r := execute(nil, "admin")
	require.Equal(t, 0, r.code)
	require.Contains(t, r.stdout, "datanode")
	require.Contains(t, r.stdout, "safemode")
}

// TestExitCodes checks the README's promise for command lines cobra
// itself rejects, outside the groups that word their own errors.
func TestExitCodes(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"bogus"}, `strato: unknown command "bogus" for "strato" (see strato --help)`},
		{[]string{"--bogus"}, "strato: unknown flag: --bogus (see strato --help)"},
		{[]string{"meta", "--bogus"}, "strato: unknown flag: --bogus (see strato meta --help)"},
		{[]string{"datanode", "--bogus"}, "strato: unknown flag: --bogus (see strato datanode --help)"},
		{[]string{"bench", "bogus"}, `strato: unknown command "bogus" for "strato bench" (see strato bench --help)`},
		{[]string{"sh", "bogus"}, `strato: sh: unknown command "bogus" (see strato sh --help)`},
	} {
		line := requireFailure(t, execute(nil, tc.args...), 2, tc.args)
		require.Equal(t, tc.want, line)
	}
	// bench meta parses Hadoop's single-dash options itself (and shows
	// its usage).
	r := execute(nil, "bench", "meta", "-bogus")
	require.Equal(t, 2, r.code, r.stderr)
	require.Contains(t, r.stderr, "strato: flag provided but not defined: -bogus")
	r = execute(nil, "bench")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "teragen")
}
