package web_test

import (
	"bytes"
	"context"
	"encoding/json"
	"html"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/require"

	"github.com/strato-io/strato/client"
	"github.com/strato-io/strato/internal/buildinfo"
	"github.com/strato-io/strato/minicluster"
	stratov1 "github.com/strato-io/strato/proto/strato/v1"
	"github.com/strato-io/strato/web"
)

// consoleCluster is a cluster the console tests built, and what they know
// of it.
type consoleCluster struct {
	c     *minicluster.Cluster
	cl    *client.Client
	url   string // the console's
	dead  string // the datanode stopped
	under []uint64
}

// The namespace the tests write: an FSO bucket with two directories and
// three files, an OBS bucket with three keys.
var (
	fsoFiles = map[string][]byte{
		"dir/a.txt":     []byte("hello, console\n"),
		"dir/sub/b.bin": bytes.Repeat([]byte{7}, 100_000),
		"top.txt":       []byte("top"),
	}
	obsKeys    = []string{"x/1", "x/2", "y"}
	objects    = len(fsoFiles) + 2 + len(obsKeys) // files, dir and dir/sub, keys
	namespaceB = int64(len("hello, console\n") + 100_000 + len("top") + 3*len("obs"))
)

// startConsoleCluster starts three datanodes and a console, writes the
// namespace, closes every container, then stops a datanode and waits until
// meta declares it dead: the containers it held are under-replicated
// (three datanodes, no fourth to copy to).
func startConsoleCluster(t *testing.T) *consoleCluster {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	// Production intervals (3 s heartbeats, dead after 2 minutes) on a
	// fake clock, moved on a second at each look.
	clock := clockwork.NewFakeClock()
	c, err := minicluster.Start(ctx, minicluster.Options{Dir: t.TempDir(), HeartbeatInterval: 3 * time.Second,
		DeadAfter: 2 * time.Minute, Clock: clock})
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	cl, err := c.Client()
	require.NoError(t, err)
	t.Cleanup(func() { _ = cl.Close() })
	con, err := web.New(web.Options{Meta: c.MetaAddr(), SampleInterval: 200 * time.Millisecond,
		Queues: func() []web.Queue { return []web.Queue{{Name: "test queue", Value: 7}} },
		Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	t.Cleanup(func() { _ = con.Close() })
	srv := httptest.NewServer(con)
	t.Cleanup(srv.Close)
	cc := &consoleCluster{c: c, cl: cl, url: srv.URL}

	_, err = cl.CreateVolume(ctx, &stratov1.CreateVolumeRequest{Name: "vol1"})
	require.NoError(t, err)
	_, err = cl.CreateBucket(ctx, &stratov1.CreateBucketRequest{Volume: "vol1", Name: "fso1"})
	require.NoError(t, err)
	_, err = cl.CreateBucket(ctx, &stratov1.CreateBucketRequest{Volume: "vol1", Name: "obs1", Layout: stratov1.BucketLayout_LAYOUT_OBS})
	require.NoError(t, err)
	write := func(w *client.Writer, err error, data []byte) {
		t.Helper()
		require.NoError(t, err)
		_, err = w.Write(data)
		require.NoError(t, err)
		require.NoError(t, w.Close())
	}
	for p, data := range fsoFiles {
		w, err := cl.Create(ctx, "/vol1/fso1/"+p, client.CreateOptions{Recursive: true})
		write(w, err, data)
	}
	for _, k := range obsKeys {
		w, err := cl.CreateKey(ctx, "vol1", "obs1", k, client.WriteOptions{})
		write(w, err, []byte("obs"))
	}

	// Close every container and wait for its replicas to be CLOSED.
	admin := func(fn func(ctx context.Context, a stratov1.AdminServiceClient) error) error {
		return cl.Meta().Do(ctx, func(ctx context.Context, _ stratov1.NamespaceServiceClient, s client.ClusterStubs) error {
			return fn(ctx, s.AdminServiceClient)
		})
	}
	var containers []*stratov1.ContainerInfo
	require.NoError(t, admin(func(ctx context.Context, a stratov1.AdminServiceClient) error {
		resp, err := a.ListContainers(ctx, &stratov1.ListContainersRequest{})
		containers = resp.GetContainers()
		return err
	}))
	replicas := func(id uint64) (*stratov1.ContainerReplicasResponse, error) {
		var resp *stratov1.ContainerReplicasResponse
		err := admin(func(ctx context.Context, a stratov1.AdminServiceClient) error {
			var err error
			resp, err = a.ContainerReplicas(ctx, &stratov1.ContainerReplicasRequest{ContainerId: id})
			return err
		})
		return resp, err
	}
	var written []uint64 // containers with data
	for _, ci := range containers {
		r, err := replicas(ci.GetId())
		require.NoError(t, err)
		if len(r.GetReplicas()) == 0 {
			continue
		}
		written = append(written, ci.GetId())
		require.NoError(t, cl.CloseContainer(ctx, ci.GetId(), "", "console test"))
	}
	require.NotEmpty(t, written)
	require.Eventually(t, func() bool {
		clock.Advance(time.Second)
		for _, id := range written {
			r, err := replicas(id)
			if err != nil || r.GetContainer().GetState() != stratov1.ContainerState_CONTAINER_CLOSED || len(r.GetReplicas()) != 3 {
				return false
			}
			for _, rep := range r.GetReplicas() {
				if rep.GetState() != stratov1.ContainerState_CONTAINER_CLOSED {
					return false
				}
			}
		}
		return true
	}, time.Minute, 10*time.Millisecond)

	// Stop the third datanode: dead within DeadAfter; what it held is
	// short of a copy.
	cc.dead = c.Datanode(2).ID()
	require.NoError(t, c.StopDatanode(2))
	require.Eventually(t, func() bool {
		clock.Advance(time.Second)
		var dns []*stratov1.DatanodeInfo
		if admin(func(ctx context.Context, a stratov1.AdminServiceClient) error {
			resp, err := a.ListDatanodes(ctx, &stratov1.ListDatanodesRequest{})
			dns = resp.GetDatanodes()
			return err
		}) != nil {
			return false
		}
		for _, d := range dns {
			if d.GetDetails().GetId() == cc.dead {
				return d.GetHealth() == stratov1.NodeHealth_NODE_DEAD
			}
		}
		return false
	}, time.Minute, 10*time.Millisecond)
	// The summary's problems are the last replication pass's: wait for
	// one that started after the death.
	dead := clock.Now().UnixMilli()
	require.Eventually(t, func() bool {
		clock.Advance(time.Second)
		var sum *stratov1.ClusterSummary
		err := admin(func(ctx context.Context, a stratov1.AdminServiceClient) error {
			var err error
			sum, err = a.GetClusterSummary(ctx, &stratov1.GetClusterSummaryRequest{})
			return err
		})
		return err == nil && sum.GetProblemsAsOfUnixMs() > dead
	}, time.Minute, 10*time.Millisecond)
	for _, id := range written {
		r, err := replicas(id)
		require.NoError(t, err)
		if _, ok := r.GetReplicas()[cc.dead]; ok {
			cc.under = append(cc.under, id)
		}
	}
	require.NotEmpty(t, cc.under, "the dead datanode held no closed container")
	return cc
}

// get fetches a console URL.
func (cc *consoleCluster) get(t *testing.T, path string) (int, string) {
	t.Helper()
	resp, err := http.Get(cc.url + path)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(b)
}

// checkHTTP: every page answers 200 with the cluster's numbers; the JSON
// API agrees; bad input answers 404 or 400 with a message, never 500.
func (cc *consoleCluster) checkHTTP(t *testing.T) {
	code, body := cc.get(t, "/api/overview")
	require.Equal(t, http.StatusOK, code, body)
	var o struct {
		Volumes    int            `json:"volumes"`
		Buckets    int            `json:"buckets"`
		Objects    int64          `json:"objects"`
		Bytes      int64          `json:"bytes"`
		Datanodes  int            `json:"datanodes"`
		Health     map[string]int `json:"datanodes_by_health"`
		Problems   map[string]int `json:"container_problems"`
		AsOf       int64          `json:"container_problems_as_of_unix_ms"`
		SafeMode   bool           `json:"safe_mode"`
		Containers int            `json:"containers"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &o))
	require.Equal(t, 1, o.Volumes)
	require.Equal(t, 2, o.Buckets)
	require.Equal(t, int64(objects), o.Objects)
	require.Equal(t, namespaceB, o.Bytes)
	require.Equal(t, 3, o.Datanodes)
	require.Equal(t, map[string]int{"HEALTHY": 2, "DEAD": 1}, o.Health)
	require.Equal(t, len(cc.under), o.Problems["under-replicated"])
	require.Zero(t, o.Problems["missing"])
	require.NotZero(t, o.AsOf, "judged by a replication pass")
	require.False(t, o.SafeMode)

	for _, p := range []string{"/", "/datanodes", "/datanodes?health=dead", "/datanodes/" + cc.dead, "/pipelines", "/pipelines?state=closed",
		"/containers", "/containers?problem=under-replicated", "/containers?state=closed&problem=any", "/containers?limit=1",
		"/ns/", "/ns/vol1", "/ns/vol1/fso1/", "/ns/vol1/fso1/dir/", "/ns/vol1/fso1/dir/?du=1", "/ns/vol1/fso1/dir/a.txt",
		"/ns/vol1/obs1/", "/ns/vol1/obs1/x/", "/ns/vol1/obs1/y", "/ops", "/api/rates", "/static/style.css", "/healthz-not-here"} {
		code, body := cc.get(t, p)
		if p == "/healthz-not-here" {
			require.Equal(t, http.StatusNotFound, code)
			continue
		}
		require.Equal(t, http.StatusOK, code, "%s: %s", p, body)
	}
	// Every page's footer names the build.
	_, body = cc.get(t, "/")
	info := buildinfo.Get()
	require.Contains(t, body, `<span id="build" title="commit `+info.Commit+`, `+info.Date+`, `+info.GoVersion+`">`+info.Version+` (`+info.ShortCommit()+`)</span>`)
	require.Contains(t, body, `<span id="problems-as-of">As of its last pass, `)
	_, body = cc.get(t, "/datanodes?health=dead")
	require.Contains(t, body, cc.dead)
	require.Contains(t, body, "DEAD")
	require.Contains(t, body, "<td>/default-rack</td>", "the rack column")
	_, body = cc.get(t, "/containers?problem=under-replicated")
	for _, id := range cc.under {
		require.Contains(t, body, `data-id="`+itoa(id)+`" data-problem="under-replicated"`)
	}
	// Filtered by meta: the containers with a replica on the dead node,
	// and its page's disks (what its last heartbeat reported).
	_, body = cc.get(t, "/containers?datanode="+cc.dead+"&state=closed")
	for _, id := range cc.under {
		require.Contains(t, body, `data-id="`+itoa(id)+`"`)
	}
	_, body = cc.get(t, "/datanodes/"+cc.dead)
	require.Contains(t, body, `id="disks"`)
	require.NotContains(t, body, "not reported")
	require.Contains(t, body, `id="scanner"`)
	require.Contains(t, body, `<td class="volume volume-healthy">HEALTHY</td>`)
	_, body = cc.get(t, "/ops")
	require.Contains(t, body, `id="copies-in-flight"`)
	_, body = cc.get(t, "/ns/vol1/fso1/dir/?du=1")
	require.Contains(t, body, "97.7 KiB") // dir/sub holds b.bin
	_, body = cc.get(t, "/ops")
	require.Contains(t, body, "test queue")
	// A prefix without its slash goes to the listing.
	resp, err := http.Get(cc.url + "/ns/vol1/obs1/x")
	require.NoError(t, err)
	_ = resp.Body.Close()
	require.Equal(t, "/ns/vol1/obs1/x/", resp.Request.URL.Path)
	// Download.
	code, body = cc.get(t, "/download/vol1/fso1/dir/a.txt")
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, string(fsoFiles["dir/a.txt"]), body)

	for _, bad := range []struct {
		path string
		code int
		says string
	}{
		{"/datanodes/dn-nope", 404, "no datanode dn-nope"},
		{"/containers/424242", 404, "no container 424242"},
		{"/containers/abc", 400, `container ID "abc" is not a number`},
		{"/containers?after=x", 400, `after "x" is not a number`},
		{"/containers?problem=sad", 400, `problem "sad"`},
		{"/containers?state=weird", 400, `state "weird"`},
		{"/containers?datanode=dn-nope", 404, "no datanode dn-nope"},
		{"/containers?limit=0", 400, "limit"},
		{"/pipelines?after=-1", 400, "after"},
		{"/datanodes?health=sleepy", 400, "health"},
		{"/ns/novolume", 404, "volume not found"},
		{"/ns/vol1/nobucket/", 404, "bucket not found"},
		{"/ns/vol1/fso1/no/such/file", 404, "not found"},
		{"/ns/vol1/obs1/nokey", 404, "not found"},
		{"/ns/vol1/fso1/dir/?limit=5000", 400, "limit"},
		{"/download/vol1/fso1/dir/missing", 404, "not found"},
		{"/download/vol1", 400, "download needs"},
		{"/nowhere", 404, "no page at /nowhere"},
	} {
		code, body := cc.get(t, bad.path)
		require.Equal(t, bad.code, code, "%s: %s", bad.path, body)
		require.Contains(t, html.UnescapeString(body), bad.says, bad.path)
		require.NotContains(t, body, "goroutine", bad.path)
	}
	req, err := http.NewRequest(http.MethodPost, cc.url+"/ops", strings.NewReader("x"))
	require.NoError(t, err)
	resp, err = http.DefaultClient.Do(req)
	require.NoError(t, err)
	_ = resp.Body.Close()
	require.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode)
}

func itoa(n uint64) string { return strconv.FormatUint(n, 10) }

// TestConsole builds a cluster with a dead datanode and under-replicated
// containers, checks every page and API over HTTP, then in a real browser
// (browser_test.go).
func TestConsole(t *testing.T) {
	cc := startConsoleCluster(t)
	t.Run("http", cc.checkHTTP)
	t.Run("browser", cc.checkBrowser)
}
