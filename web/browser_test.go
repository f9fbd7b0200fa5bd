package web_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/strato-io/strato/internal/browsertest"
)

// artifacts is where the screenshots go: $STRATO_ARTIFACTS/console, else
// the module's artifacts/console (ignored by git).
func artifacts(t *testing.T) string {
	dir := os.Getenv("STRATO_ARTIFACTS")
	if dir == "" {
		_, file, _, _ := runtime.Caller(0)
		dir = filepath.Join(filepath.Dir(file), "..", "artifacts")
	}
	dir = filepath.Join(dir, "console")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	return dir
}

// checkBrowser loads every page in headless Chromium: no console error or
// exception, the numbers of the cluster, navigation by the menu and by
// links, and a screenshot of each page.
func (cc *consoleCluster) checkBrowser(t *testing.T) {
	shots := artifacts(t)
	ctx, cancel := browsertest.New(t, chromedp.WindowSize(1400, 1000))
	defer cancel()

	var (
		mu       sync.Mutex
		problems []string
	)
	go func() {
		for m, err := range chromedp.Console(ctx) {
			if err != nil {
				return
			}
			if m.IsException() || m.Type == chromedp.ConsoleError {
				mu.Lock()
				problems = append(problems, m.String()+" at "+m.URL)
				mu.Unlock()
			}
		}
	}()

	run := func(what string, steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		require.NoError(t, chromedp.Do(sctx, steps...), what)
	}
	text := func(sel string) string {
		t.Helper()
		sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		s, err := chromedp.Run(sctx, chromedp.Text(chromedp.CSS(sel)))
		require.NoError(t, err, sel)
		return strings.TrimSpace(s)
	}
	shoot := func(name string) {
		t.Helper()
		sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		png, err := chromedp.Run(sctx, chromedp.FullScreenshot(100))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(shots, name+".png"), png, 0o644))
	}
	// follow clicks the link to href inside scope and waits until the new
	// document is the one shown: its path is href, it has loaded, and it
	// has the ready element. Waiting only for an element could see the old
	// page, as when both pages have it (#entries, #datanodes), and a
	// screenshot taken mid-navigation never returns.
	follow := func(what, scope, href, ready string) {
		t.Helper()
		run(what, chromedp.Click(chromedp.CSS(scope+` a[href="`+href+`"]`)))
		loaded := fmt.Sprintf(`location.pathname === %q && document.readyState === "complete"`, href)
		deadline := time.Now().Add(30 * time.Second)
		for {
			sctx, cancel := context.WithTimeout(ctx, 2*time.Second)
			ok, err := chromedp.Run(sctx, chromedp.Evaluate[bool](loaded))
			cancel()
			if err == nil && ok {
				break
			}
			// An evaluation can fail while the old document is torn down.
			require.True(t, time.Now().Before(deadline), "%s: %s not loaded (last error %v)", what, href, err)
			time.Sleep(50 * time.Millisecond)
		}
		run(what, chromedp.WaitReady(chromedp.CSS(ready)))
	}
	page := func(name, path string) {
		t.Helper()
		run(path, chromedp.Navigate(cc.url+path), chromedp.WaitReady(chromedp.CSS("footer")))
		shoot(name)
	}

	// Overview: the numbers, the dead datanode, the problem counts; the
	// charts drawn without an error.
	page("overview", "/")
	require.Equal(t, "1", text("#volumes"))
	require.Equal(t, "2", text("#buckets"))
	require.Equal(t, itoa(uint64(objects)), text("#objects"))
	require.Equal(t, "3", text("#datanodes"))
	require.Contains(t, text("#datanode-health"), "2 healthy")
	require.Contains(t, text("#datanode-health"), "1 dead")
	require.Contains(t, text(`[data-problem="under-replicated"]`), itoa(uint64(len(cc.under))))
	require.Equal(t, "off", text("#safe-mode"))
	require.Contains(t, text("#meta-replicas"), "leader")
	time.Sleep(600 * time.Millisecond) // a few samples for the charts
	page("overview", "/")

	// The menu leads to the datanodes; the dead one's link to its page.
	follow("menu", "header nav", "/datanodes", "#datanodes")
	shoot("datanodes")
	require.Contains(t, text(`#datanodes tr[data-id="`+cc.dead+`"]`), "DEAD")
	follow("datanode link", "#datanodes", "/datanodes/"+cc.dead, "#datanode")
	require.Equal(t, "DEAD", text("#health"))
	shoot("datanode")

	page("pipelines", "/pipelines")
	page("containers", "/containers")
	page("containers-under-replicated", "/containers?problem=under-replicated")
	for _, id := range cc.under {
		require.Contains(t, text(`#containers tr[data-id="`+itoa(id)+`"]`), "under-replicated")
	}
	follow("container link", "#containers", "/containers/"+itoa(cc.under[0]), "#container")
	require.Equal(t, "2 of 3", text("#good"))
	require.Equal(t, "under-replicated", text("#problem"))
	shoot("container")

	// The namespace, from the volumes down to a key.
	page("namespace-volumes", "/ns/")
	follow("volume", "#volumes", "/ns/vol1", "#buckets")
	shoot("namespace-buckets")
	follow("bucket", "#buckets", "/ns/vol1/fso1/", "#entries")
	follow("dir", "#entries", "/ns/vol1/fso1/dir/", "#entries")
	require.Contains(t, text("#entries"), "a.txt")
	require.Contains(t, text("#entries"), "sub/")
	shoot("namespace-directory")
	follow("key", "#entries", "/ns/vol1/fso1/dir/a.txt", "#key")
	require.Contains(t, text("#size"), "15 bytes")
	shoot("namespace-key")
	page("namespace-obs", "/ns/vol1/obs1/x/")
	require.Contains(t, text("#entries"), "1")
	page("operations", "/ops")
	require.Contains(t, text("#repairs"), "under-replicated")

	mu.Lock()
	defer mu.Unlock()
	require.Empty(t, problems, "console errors in the browser")
	t.Logf("screenshots in %s", shots)
}
