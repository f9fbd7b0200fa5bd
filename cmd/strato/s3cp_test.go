package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/strato-io/strato/minicluster"
	"github.com/strato-io/strato/s3"
)

// TestS3ClientCommands: strato s3 mb, cp (up and down) and ls against a
// gateway on a real cluster, with a key made by strato admin s3 key create.
func TestS3ClientCommands(t *testing.T) {
	h := dataClusterWith(t, minicluster.Options{S3: &minicluster.S3Options{Gateway: s3.Options{CleanupInterval: -1}}})

	k := jsonOf[map[string]any](t, h.ok("admin", "s3", "key", "create", "--json"))
	t.Setenv("AWS_ACCESS_KEY_ID", k["key"].(map[string]any)["accessKey"].(string))
	t.Setenv("AWS_SECRET_ACCESS_KEY", k["secret"].(string))
	t.Setenv("AWS_ENDPOINT_URL", h.s3)
	run := func(args ...string) string {
		t.Helper()
		r := execute(nil, append([]string{"s3"}, args...)...)
		require.Equal(t, 0, r.code, "strato s3 %s: %s", strings.Join(args, " "), r.stderr)
		return r.stdout
	}
	dir := t.TempDir()
	data := payload(5<<20+7, 3)
	src := filepath.Join(dir, "src.bin")
	require.NoError(t, os.WriteFile(src, data, 0o644))

	run("mb", "s3://cli")
	run("mb", "s3://cli") // exists: no error
	run("cp", src, "s3://cli/dir/")
	run("cp", src, "s3://cli/dir/ü and space")
	require.Equal(t, "     5242887  dir/src.bin\n     5242887  dir/ü and space\n", run("ls", "s3://cli/dir/"))
	out := filepath.Join(dir, "out.bin")
	run("cp", "s3://cli/dir/ü and space", out)
	back, err := os.ReadFile(out)
	require.NoError(t, err)
	require.Equal(t, data, back)

	line := requireFailure(t, execute(nil, "s3", "cp", "s3://cli/nope", out), 1, []string{"s3", "cp"})
	require.Contains(t, line, "NoSuchKey")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "wrong-secret")
	line = requireFailure(t, execute(nil, "s3", "ls", "s3://cli"), 1, []string{"s3", "ls"})
	require.Contains(t, line, "SignatureDoesNotMatch")
}
