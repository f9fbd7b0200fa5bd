// Package browsertest starts headless Chromium for the tests that drive a
// real browser: the console's pages (web) and S3 requests from a page of
// another origin (s3's CORS).
package browsertest

import (
	"context"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// Chromium finds the browser: $STRATO_CHROMIUM, else chromium (Debian's
// package, which CI installs) or Chrome on the PATH. Without one the test
// is skipped, unless STRATO_REQUIRE_CHROMIUM is set (CI), where it fails.
func Chromium(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("STRATO_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("STRATO_REQUIRE_CHROMIUM") != "" {
		t.Fatal("no chromium on the PATH and STRATO_REQUIRE_CHROMIUM is set: apt-get install chromium")
	}
	t.Skip("no chromium on the PATH (apt-get install chromium, or set STRATO_CHROMIUM): the browser test is skipped")
	return ""
}

// New starts headless Chromium (Chromium(t)) with a profile of its own
// and returns a context of its first tab, warmed up (WarmUp); cancel
// stops the browser.
func New(t *testing.T, opts ...chromedp.ExecAllocatorOption) (ctx context.Context, cancel func()) {
	t.Helper()
	exe := Chromium(t)
	all := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(exe), chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.UserDataDir(t.TempDir()))
	alloc, cancelAlloc := chromedp.NewExecAllocator(t.Context(), append(all, opts...)...)
	ctx, cancelCtx := chromedp.NewContext(alloc)
	if err := chromedp.Do(ctx); err != nil { // start the browser on a context without a deadline
		cancelCtx()
		cancelAlloc()
		t.Fatalf("start chromium: %v", err)
	}
	WarmUp(ctx, t)
	return ctx, func() { cancelCtx(); cancelAlloc() }
}

// WarmUp navigates the new browser's first tab once, so that chromedp
// knows the tab's top-level frame before the test's first page. chromedp
// attaches to the first tab without asking for its frame tree; when the
// tab's about:blank committed before the attach, the frame is learnt only
// from the next navigation's events, and a Navigate that starts with no
// frame can miss its own "init" event and wait for a load it never sees
// (seen on a loaded 2-core machine). A failed warm-up is only logged: the
// navigation it started still tells chromedp the frame.
func WarmUp(ctx context.Context, t *testing.T) {
	t.Helper()
	start := time.Now()
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := chromedp.Do(wctx, chromedp.Navigate("about:blank")); err != nil {
		t.Logf("browser warm-up after %v: %v", time.Since(start).Round(time.Millisecond), err)
	}
}
