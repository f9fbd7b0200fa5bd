package test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestTeraGenMatchesHadoop runs Hadoop's own TeraGen (hadoop-mapreduce-examples,
// local mode, file:// output) and `strato bench teragen --local-dir` with the
// same rows and map tasks, and requires the same part files byte for byte and
// the same CHECKSUM counter.
//
// It needs java, javac and mvn; without them it is skipped, unless
// STRATO_REQUIRE_HADOOP is set (CI sets it). The Hadoop jars come from Maven
// Central once (test/hadoop/fetch.sh, `make hadoop-deps`) into
// $STRATO_CACHE (default .cache/ of the work tree).
//
// Hadoop's LocalJobRunner always runs one map task: its protocol provider
// sets mapreduce.job.maps to 1. test/hadoop/LocalMapsProvider.java is the
// same provider without that line, put ahead of Hadoop's on the classpath,
// so the job runs the splits TeraGen asks for; TeraGen's own code is
// untouched, and the test checks TeraGen's log line "Generating ROWS using
// MAPS" to know the provider was used.
func TestTeraGenMatchesHadoop(t *testing.T) {
	for _, tool := range []string{"java", "javac", "mvn"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("STRATO_REQUIRE_HADOOP") != "" {
				t.Fatalf("%s not found and STRATO_REQUIRE_HADOOP is set", tool)
			}
			t.Skipf("%s not found: the comparison with Hadoop's TeraGen needs Java 17 (JDK) and Maven", tool)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()

	start := time.Now()
	fetch := exec.CommandContext(ctx, "bash", "hadoop/fetch.sh")
	var fetchLog bytes.Buffer
	fetch.Stderr = &fetchLog
	out, err := fetch.Output()
	require.NoError(t, err, "fetching the Hadoop jars:\n%s", fetchLog.String())
	lib := strings.TrimSpace(string(out))
	t.Logf("hadoop jars in %s (%.1f s) %s", lib, time.Since(start).Seconds(), strings.TrimSpace(fetchLog.String()))

	dir := t.TempDir()
	classes := filepath.Join(dir, "classes")
	start = time.Now()
	javac := exec.CommandContext(ctx, "javac", "-nowarn", "-d", classes, "-cp", filepath.Join(lib, "*"), "hadoop/LocalMapsProvider.java")
	if out, err := javac.CombinedOutput(); err != nil {
		t.Fatalf("javac: %v\n%s", err, out)
	}
	services := filepath.Join(classes, "META-INF", "services")
	require.NoError(t, os.MkdirAll(services, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(services, "org.apache.hadoop.mapreduce.protocol.ClientProtocolProvider"),
		[]byte("strato.hadooptest.LocalMapsProvider\n"), 0o644))
	t.Logf("javac %.1f s", time.Since(start).Seconds())
	conf, err := filepath.Abs("hadoop/conf")
	require.NoError(t, err)
	classpath := strings.Join([]string{conf, classes, filepath.Join(lib, "*")}, string(os.PathListSeparator))

	for _, c := range []struct {
		rows string
		maps int
	}{
		{"5003", 3}, // uneven: 1668, 1668, 1667 rows
		{"2", 3},    // fewer rows than maps: the last part is empty
	} {
		// No comma in the name: it ends up in hadoop.tmp.dir below, and
		// Hadoop splits -D values at commas.
		t.Run(fmt.Sprintf("rows=%s/maps=%d", c.rows, c.maps), func(t *testing.T) {
			dir := t.TempDir()
			hadoopOut := filepath.Join(dir, "hadoop")
			start := time.Now()
			java := exec.CommandContext(ctx, "java", "-Xmx512m", "-XX:TieredStopAtLevel=1", "-cp", classpath,
				"org.apache.hadoop.examples.terasort.TeraGen",
				"-D", "mapreduce.framework.name=local",
				"-D", fmt.Sprintf("mapreduce.job.maps=%d", c.maps),
				"-D", "hadoop.tmp.dir="+filepath.Join(dir, "hadoop-tmp"),
				c.rows, "file://"+hadoopOut)
			log, err := java.CombinedOutput()
			require.NoError(t, err, "TeraGen:\n%s", log)
			t.Logf("Hadoop TeraGen %.1f s", time.Since(start).Seconds())
			require.Contains(t, string(log), fmt.Sprintf("Generating %s using %d", c.rows, c.maps), "TeraGen's split count:\n%s", log)
			hadoopSum := counterLine(t, string(log))

			stratoRoot := filepath.Join(dir, "strato")
			cmd := exec.CommandContext(ctx, binary, "bench", "teragen", c.rows, "/tg", "--writers", fmt.Sprint(c.maps), "--local-dir", stratoRoot)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			require.NoError(t, cmd.Run(), "strato bench teragen:\n%s%s", stdout.String(), stderr.String())
			require.Equal(t, hadoopSum, counterLine(t, stdout.String()), "CHECKSUM")

			hadoopParts, stratoParts := partFiles(t, hadoopOut), partFiles(t, filepath.Join(stratoRoot, "tg"))
			require.Len(t, hadoopParts, c.maps)
			require.Equal(t, hadoopParts, stratoParts)
			for _, name := range hadoopParts {
				want, err := os.ReadFile(filepath.Join(hadoopOut, name))
				require.NoError(t, err)
				got, err := os.ReadFile(filepath.Join(stratoRoot, "tg", name))
				require.NoError(t, err)
				require.True(t, bytes.Equal(want, got), "%s: %d bytes from Hadoop, %d from strato, first difference at %d",
					name, len(want), len(got), firstDiff(want, got))
			}
		})
	}
}

var checksumLine = regexp.MustCompile(`(?m)^\s*CHECKSUM=(-?[0-9]+)$`)

func counterLine(t *testing.T, log string) string {
	t.Helper()
	m := checksumLine.FindAllStringSubmatch(log, -1)
	require.Len(t, m, 1, "one CHECKSUM= line in:\n%s", log)
	return m[0][1]
}

// partFiles lists dir's part-m-NNNNN files (Hadoop also leaves _SUCCESS
// and .crc files).
func partFiles(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "part-m-") {
			names = append(names, e.Name())
		}
	}
	slices.Sort(names)
	return names
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// TestBenchTeraGenTargets: the local target refuses an output directory that
// exists, as TeraGen does; the strato target (an in-process cluster) writes
// the same rows (the same CHECKSUM) and wants /volume/bucket/dir.
func TestBenchTeraGenTargets(t *testing.T) {
	root := t.TempDir()
	run := func(args ...string) (string, error) {
		out, err := exec.Command(binary, append([]string{"bench", "teragen"}, args...)...).CombinedOutput()
		return string(out), err
	}
	checksum := func(out string) string {
		for _, l := range strings.Split(out, "\n") {
			if strings.HasPrefix(l, "CHECKSUM=") {
				return l
			}
		}
		t.Fatalf("no CHECKSUM line in:\n%s", out)
		return ""
	}
	out, err := run("1000", "/tg", "--local-dir", root)
	require.NoError(t, err, out)
	want := checksum(out)
	out, err = run("1000", "/tg", "--local-dir", root)
	require.Error(t, err)
	require.Contains(t, out, "already exists")

	out, err = run("1000", "/vol/bkt/tg", "--writers", "3")
	require.NoError(t, err, out)
	require.Equal(t, want, checksum(out), out)
	require.Contains(t, out, "hsync.call: 1")

	out, err = run("10", "/tg")
	require.Error(t, err)
	require.Contains(t, out, "PATH must be /volume/bucket/dir")
	out, err = run("10", "/v/b/tg", "--meta", "127.0.0.1:1")
	require.Error(t, err)
	require.Contains(t, out, "meta at 127.0.0.1:1")
	out, err = run("10x", "/tg", "--local-dir", root)
	require.Error(t, err)
	require.Contains(t, out, "bad number of rows")
}
