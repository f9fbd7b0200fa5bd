//go:build linux

package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// TestProgressLine draws a bar on a fake clock: bytes, percentage, bar,
// throughput and time left, redrawn no more than every 100 ms, and a last
// line with the total, the time taken and the average rate.
func TestProgressLine(t *testing.T) {
	var buf bytes.Buffer
	at := time.Unix(0, 0)
	p := &progress{w: &buf, width: 100, label: "part-0000", total: 100 << 20, now: func() time.Time { return at }}
	p.start = at
	p.draw(false)
	at = at.Add(2 * time.Second)
	p.add(20 << 20)
	at = at.Add(50 * time.Millisecond)
	p.add(1 << 20) // too soon: not drawn
	at = at.Add(50 * time.Millisecond)
	p.add(3 << 20)
	at = at.Add(time.Second)
	p.add(76 << 20)
	p.finish(true)
	lines := strings.Split(buf.String(), "\r\x1b[K")
	require.Equal(t, []string{"",
		"part-0000  0 B / 100 MiB    0%  [........................................]  0 B/s  ETA -",
		"part-0000  20 MiB / 100 MiB   20%  [########................................]  10 MiB/s  ETA 8s",
		"part-0000  24 MiB / 100 MiB   24%  [#########...............................]  11.4 MiB/s  ETA 7s",
		"part-0000  100 MiB / 100 MiB  100%  [########################################]  32.3 MiB/s  ETA 0s",
		"part-0000  100 MiB  in 3.1s  32.3 MiB/s\n"}, lines)

	// A narrow terminal drops the bar; an unknown size has no percentage.
	buf.Reset()
	p = &progress{w: &buf, width: 45, label: "x", total: 10 << 20, now: func() time.Time { return at }, start: at.Add(-time.Second)}
	p.add(5 << 20)
	require.Equal(t, "\r\x1b[Kx  5 MiB / 10 MiB   50%  5 MiB/s  ETA 1s", buf.String())
	buf.Reset()
	p = &progress{w: &buf, width: 80, label: "-", total: -1, now: func() time.Time { return at }, start: at.Add(-time.Second)}
	p.add(3 << 10)
	p.finish(false)
	require.Equal(t, "\r\x1b[K-  3 KiB  3 KiB/s\r\x1b[K", buf.String())

	var none *progress // not a terminal: nothing, and the streams pass through
	r := strings.NewReader("abc")
	require.Same(t, io.Reader(r), none.reader(r))
	none.finish(true)
}

// openPTY opens a pseudo-terminal of cols columns: its controller and the
// terminal end a command writes to.
func openPTY(t *testing.T, cols uint16) (ptmx, tty *os.File) {
	t.Helper()
	ptmx, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	t.Cleanup(func() { _ = ptmx.Close() })
	require.NoError(t, unix.IoctlSetPointerInt(int(ptmx.Fd()), unix.TIOCSPTLCK, 0))
	n, err := unix.IoctlGetInt(int(ptmx.Fd()), unix.TIOCGPTN)
	require.NoError(t, err)
	tty, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	require.NoError(t, err)
	t.Cleanup(func() { _ = tty.Close() })
	require.NoError(t, unix.IoctlSetWinsize(int(tty.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: 24, Col: cols}))
	return ptmx, tty
}

// onTerminal runs a command of the harness's meta server with stderr on a
// pseudo-terminal and returns its exit code, its stdout and what the
// terminal showed.
func (h *cliHarness) onTerminal(args ...string) (code int, stdout, screen string) {
	h.t.Helper()
	return runOnTerminal(h.t, append(args, "--meta", h.addr)...)
}

// runOnTerminal runs a command line with stderr on a pseudo-terminal.
func runOnTerminal(t *testing.T, args ...string) (code int, stdout, screen string) {
	t.Helper()
	ptmx, tty := openPTY(t, 120)
	var shown bytes.Buffer
	var wg sync.WaitGroup
	wg.Go(func() { _, _ = io.Copy(&shown, ptmx) })
	root := newRootCmd()
	var out bytes.Buffer
	root.SetArgs(args)
	root.SetOut(&out)
	root.SetErr(tty)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := root.ExecuteContext(ctx); err != nil {
		fmt.Fprintln(tty, "strato:", err)
		code = exitCode(err)
	}
	// Closing the terminal end ends the controller's reads (EIO) once it
	// has read everything written.
	require.NoError(t, tty.Close())
	wg.Wait()
	return code, out.String(), shown.String()
}

func TestFSProgressOnTerminal(t *testing.T) {
	h := dataCluster(t)
	local := t.TempDir()
	h.ok("sh", "volume", "create", "vol")
	h.ok("sh", "bucket", "create", "/vol/bkt")
	src := writeLocal(t, local, "big.bin", payload(3<<20, 5))

	for _, args := range [][]string{
		{"fs", "put", src, "/vol/bkt/big"},
		{"fs", "cp", "/vol/bkt/big", "/vol/bkt/copy"},
		{"fs", "get", "/vol/bkt/copy", filepath.Join(local, "back")},
	} {
		code, _, screen := h.onTerminal(args...)
		require.Equal(t, 0, code, "%v: %q", args, screen)
		// The first line, then the last: the total, the time, the rate.
		require.Regexp(t, `0 B / 3 MiB    0%  \[\.+\]  0 B/s  ETA -`, screen, args)
		require.Regexp(t, `\r\x1b\[K(big|copy)(\.bin)?  3 MiB  in \d[\d.]*(µs|ms|s)  [\d.]+ [KMG]?i?B/s\r?\n$`, screen, args)

		// --quiet: nothing.
		code, _, screen = h.onTerminal(append(args, "--quiet", "-f")...)
		require.Equal(t, 0, code, "%v --quiet: %q", args, screen)
		require.Empty(t, screen, args)
	}
	got, err := os.ReadFile(filepath.Join(local, "back"))
	require.NoError(t, err)
	require.Equal(t, payload(3<<20, 5), got)

	// A failed transfer clears its line: the error stands alone.
	code, _, screen := h.onTerminal("fs", "put", src, "/vol/bkt/nodir/x")
	require.Equal(t, 1, code)
	require.Regexp(t, `^strato: put .* not found.*\r?\n$`, screen)
}
