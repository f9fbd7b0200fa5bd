package main

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/strato-io/strato/client"
	"github.com/strato-io/strato/meta"
	"github.com/strato-io/strato/meta/consensus"
	"github.com/strato-io/strato/minicluster"
)

// TestFSRmMovesToTrash: with meta's trash on (its default), fs rm moves a
// file or directory into the bucket's .Trash/USER/Current under its full
// path (as hadoop fs -rm does), a name taken there gets a suffix, fs mv restores, rm under .Trash
// and --skip-trash delete at once, OBS buckets delete at once with a note,
// and fs expunge makes Current a checkpoint named by its time.
func TestFSRmMovesToTrash(t *testing.T) {
	t.Setenv("USER", "alice")
	h := startMeta(t)
	h.ok("sh", "volume", "create", "vol")
	h.ok("sh", "bucket", "create", "/vol/bkt")
	h.ok("fs", "mkdir", "-p", "/vol/bkt/a/b")
	h.ok("fs", "touch", "/vol/bkt/a/f")

	const cur = "/vol/bkt/.Trash/alice/Current/vol/bkt"
	require.Equal(t, "Moved /vol/bkt/a/f to trash at "+cur+"/a/f\n", h.ok("fs", "rm", "/vol/bkt/a/f"))
	require.Contains(t, h.fail(1, "fs", "stat", "/vol/bkt/a/f"), "not found")
	require.Regexp(t, `Type:\s+file`, h.ok("fs", "stat", cur+"/a/f"))

	// The same name again: suffixed with the time, beside the first.
	h.ok("fs", "touch", "/vol/bkt/a/f")
	out := h.ok("fs", "rm", "/vol/bkt/a/f")
	require.Regexp(t, `^Moved /vol/bkt/a/f to trash at `+cur+`/a/f\d{13}\n$`, out)
	require.Len(t, lsPaths(h.ok("fs", "ls", cur+"/a")), 2)

	// A directory, whose name is taken in Current by the parent made for
	// the files above.
	out = h.ok("fs", "rm", "-r", "/vol/bkt/a")
	m := regexp.MustCompile(`^Moved /vol/bkt/a to trash at (` + cur + `/a\d{13})\n$`).FindStringSubmatch(out)
	require.NotNil(t, m, out)
	require.Regexp(t, `Type:\s+directory`, h.ok("fs", "stat", m[1]+"/b"))
	require.Equal(t, []string{"/vol/bkt/.Trash"}, lsPaths(h.ok("fs", "ls", "/vol/bkt")))

	// Restore: a rename out of the trash.
	h.ok("fs", "mv", m[1], "/vol/bkt/a")
	require.Regexp(t, `Type:\s+directory`, h.ok("fs", "stat", "/vol/bkt/a/b"))

	// Under .Trash, and with --skip-trash, rm deletes.
	require.Empty(t, h.ok("fs", "rm", cur+"/a/f"))
	require.Contains(t, h.fail(1, "fs", "stat", cur+"/a/f"), "not found")
	require.Empty(t, h.ok("fs", "rm", "-r", "--skip-trash", "/vol/bkt/a"))
	require.Contains(t, h.fail(1, "fs", "stat", "/vol/bkt/a"), "not found")
	require.Len(t, lsPaths(h.ok("fs", "ls", cur+"/a")), 1)

	// OBS buckets keep no trash: deleted at once, with a note.
	h.ok("sh", "bucket", "create", "/vol/obs", "--layout", "obs")
	put := h.runIn(strings.NewReader(""), "sh", "key", "put", "/vol/obs/k", "-")
	require.Equal(t, 0, put.code, put.stderr)
	r := h.run("fs", "rm", "/vol/obs/k")
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, "strato: rm /vol/obs/k: OBS buckets keep no trash: deleted at once\n", r.stderr)
	require.Contains(t, h.fail(1, "fs", "stat", "/vol/obs/k"), "not found")

	// expunge: Current becomes a checkpoint yyMMddHHmmss; nothing has
	// expired yet.
	require.Equal(t, "Checkpoints made: 1, expired checkpoints deleted: 0\n", h.ok("fs", "expunge", "/vol/bkt"))
	paths := lsPaths(h.ok("fs", "ls", "/vol/bkt/.Trash/alice"))
	require.Len(t, paths, 1)
	require.Regexp(t, `^/vol/bkt/.Trash/alice/\d{12}$`, paths[0])
	require.Len(t, lsPaths(h.ok("fs", "ls", paths[0]+"/vol/bkt/a")), 1)
	require.Equal(t, "Checkpoints made: 0, expired checkpoints deleted: 0\n", h.ok("fs", "expunge", "/vol/bkt"))
	require.Contains(t, h.fail(2, "fs", "expunge", "/vol/bkt/x"), "expunge takes a bucket")
}

// TestFSRmTrashOff: with meta's --trash-interval 0, fs rm deletes at once
// and expunge does nothing.
func TestFSRmTrashOff(t *testing.T) {
	c, err := minicluster.Start(t.Context(), minicluster.Options{Dir: t.TempDir(), MetaOnly: true,
		TickInterval: 50 * time.Millisecond, TrashInterval: -1, ConfigureMeta: func(_ int, o *meta.Options) {
			o.Raft = consensus.Options{TickInterval: 10 * time.Millisecond, ElectionTicks: 10, HeartbeatTicks: 1}
		}})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, c.Close()) })
	h := &cliHarness{t: t, addr: c.MetaAddr()}
	h.ok("sh", "volume", "create", "vol")
	h.ok("sh", "bucket", "create", "/vol/bkt")
	h.ok("fs", "mkdir", "-p", "/vol/bkt/a/b")
	require.Empty(t, h.ok("fs", "rm", "-r", "/vol/bkt/a"))
	require.Empty(t, strings.TrimSpace(h.ok("fs", "ls", "/vol/bkt")))
	require.Equal(t, "Checkpoints made: 0, expired checkpoints deleted: 0\n", h.ok("fs", "expunge", "/vol/bkt"))
}

// TestTrashIntervalFlag: --trash-interval 0 is meta's "off" (a negative
// TrashInterval, since 0 in meta.Options takes the default); a negative
// value is refused.
func TestTrashIntervalFlag(t *testing.T) {
	var d time.Duration
	v := trashInterval{&d}
	require.NoError(t, v.Set("0"))
	require.Negative(t, d)
	require.Equal(t, "0s", v.String())
	require.NoError(t, v.Set("90m"))
	require.Equal(t, 90*time.Minute, d)
	require.Error(t, v.Set("-1h"))
	require.Error(t, v.Set("soon"))
}

// TestFSRmTrashUserIsTheTokens: with authentication, a removal goes to
// the trash of the token's user, whatever $USER says; expunging every
// bucket is for administrators, a bucket for whoever may read it.
func TestFSRmTrashUserIsTheTokens(t *testing.T) {
	c := authCluster(t)
	h := &cliHarness{t: t, addr: c.MetaAddr()}
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	adminTok, err := c.AdminToken()
	require.NoError(t, err)
	t.Setenv(client.TokenEnv, adminTok)
	h.ok("admin", "user", "create", "dave")
	tok := fieldsOf(t, h.ok("admin", "token", "issue", "--user", "dave"))["Token"]
	h.ok("sh", "volume", "create", "vol", "--owner", "dave")

	t.Setenv(client.TokenEnv, tok)
	t.Setenv("USER", "someone-else")
	h.ok("sh", "bucket", "create", "/vol/bkt")
	h.ok("fs", "mkdir", "-p", "/vol/bkt/d")
	require.Equal(t, "Moved /vol/bkt/d to trash at /vol/bkt/.Trash/dave/Current/vol/bkt/d\n", h.ok("fs", "rm", "-r", "/vol/bkt/d"))
	require.Contains(t, h.fail(1, "fs", "expunge"), "for administrators")
	require.Equal(t, "Checkpoints made: 1, expired checkpoints deleted: 0\n", h.ok("fs", "expunge", "/vol/bkt"))

	t.Setenv(client.TokenEnv, adminTok)
	require.Equal(t, "Checkpoints made: 0, expired checkpoints deleted: 0\n", h.ok("fs", "expunge"))
}
