package web_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/strato-io/strato/client"
	"github.com/strato-io/strato/minicluster"
	stratov1 "github.com/strato-io/strato/proto/strato/v1"
	"github.com/strato-io/strato/web"
)

// BenchmarkConsole times the console's pages as its server renders them
// (the meta calls behind a page included) on a large cluster: a namespace
// of STRATO_CONSOLE_BENCH_KEYS keys (default 1,000,000), a tenth of them
// files of one directory of an FSO bucket (100,000 at the default), the
// rest keys of an OBS bucket, and STRATO_CONSOLE_BENCH_DATANODES datanodes
// (default 1,000) registered with meta. Building it takes a minute or two
// and is not timed:
//
//	go test ./web -run '^$' -bench Console -benchtime 20x
func BenchmarkConsole(b *testing.B) {
	keys := envInt(b, "STRATO_CONSOLE_BENCH_KEYS", 1_000_000)
	nodes := envInt(b, "STRATO_CONSOLE_BENCH_DATANODES", 1000)
	dirFiles := keys / 10
	ctx := context.Background()
	c, err := minicluster.Start(ctx, minicluster.Options{Dir: b.TempDir(), MetaOnly: true, DeadAfter: time.Hour,
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = c.Close() }()
	cl, err := c.Client()
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = cl.Close() }()
	start := time.Now()
	buildNamespace(b, ctx, cl, keys, dirFiles)
	registerDatanodes(b, ctx, cl, nodes)
	b.Logf("built %d keys (%d in /bench/fso/big) and %d datanodes in %v", keys, dirFiles, nodes, time.Since(start).Round(time.Second))

	con, err := web.New(web.Options{Meta: c.MetaAddr(), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = con.Close() }()
	for _, p := range []struct{ name, url string }{
		{"overview", "/"},
		{"datanodes", "/datanodes"},
		{"containers", "/containers"},
		{"dir-first-page", "/ns/bench/fso/big/"},
		{"dir-page-at-90pct", "/ns/bench/fso/big/?after=" + fileName(dirFiles*9/10)},
		{"obs-first-page", "/ns/bench/obs/"},
		{"operations", "/ops"},
	} {
		b.Run(p.name, func(b *testing.B) {
			for b.Loop() {
				rec := httptest.NewRecorder()
				con.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, p.url, nil))
				if rec.Code != http.StatusOK {
					b.Fatalf("%s: %d %s", p.url, rec.Code, rec.Body.String())
				}
			}
		})
	}
}

func envInt(b *testing.B, name string, def int) int {
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 10 {
		b.Fatalf("%s=%q: want a number of at least 10", name, s)
	}
	return n
}

func fileName(i int) string { return fmt.Sprintf("f%07d", i) }

// buildNamespace creates /bench/fso/big/f0000000... (dirFiles empty files)
// and keys-dirFiles empty keys k/NNNNNNN of /bench/obs, 64 at a time,
// printing progress every 10 s.
func buildNamespace(b *testing.B, ctx context.Context, cl *client.Client, keys, dirFiles int) {
	if _, err := cl.CreateVolume(ctx, &stratov1.CreateVolumeRequest{Name: "bench"}); err != nil {
		b.Fatal(err)
	}
	for _, bk := range []*stratov1.CreateBucketRequest{{Volume: "bench", Name: "fso"},
		{Volume: "bench", Name: "obs", Layout: stratov1.BucketLayout_LAYOUT_OBS}} {
		if _, err := cl.CreateBucket(ctx, bk); err != nil {
			b.Fatal(err)
		}
	}
	if err := cl.Mkdirs(ctx, "/bench/fso/big"); err != nil {
		b.Fatal(err)
	}
	var next, done atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	stop := make(chan struct{})
	go func() {
		t := time.NewTicker(10 * time.Second)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				b.Logf("namespace: %d of %d keys", done.Load(), keys)
			}
		}
	}()
	for range 64 {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= keys {
					return
				}
				var w *client.Writer
				var err error
				if i < dirFiles {
					w, err = cl.Create(ctx, "/bench/fso/big/"+fileName(i), client.CreateOptions{})
				} else {
					w, err = cl.CreateKey(ctx, "bench", "obs", fmt.Sprintf("k/%07d", i), client.WriteOptions{})
				}
				if err == nil {
					err = w.Close()
				}
				if err != nil {
					errs <- err
					return
				}
				done.Add(1)
			}
		})
	}
	wg.Wait()
	close(stop)
	select {
	case err := <-errs:
		b.Fatal(err)
	default:
	}
}

// registerDatanodes registers n datanodes (they never heartbeat: meta was
// told to wait an hour before it calls one dead).
func registerDatanodes(b *testing.B, ctx context.Context, cl *client.Client, n int) {
	for i := range n {
		err := cl.Meta().Do(ctx, func(ctx context.Context, _ stratov1.NamespaceServiceClient, s client.ClusterStubs) error {
			_, err := s.Register(ctx, &stratov1.RegisterRequest{
				Details: &stratov1.DatanodeDetails{Id: fmt.Sprintf("dn-%04d", i), DataAddr: fmt.Sprintf("127.0.0.1:%d", 20000+i)},
				Stats:   &stratov1.NodeStats{Capacity: 8 << 40, Used: int64(i) << 30, Remaining: 8<<40 - int64(i)<<30, Volumes: 1}})
			return err
		})
		if err != nil {
			b.Fatal(err)
		}
	}
}
