package main

// A transfer's progress on a terminal: one line on stderr, redrawn in
// place, with the bytes moved, the throughput and the time left, e.g.
//
//	part-0000  48.0 MiB / 100 MiB  48%  [#########.........]  12.3 MiB/s  ETA 4s
//
// and, once done, the total, the time it took and the average rate. Only
// when stderr is a terminal and --quiet was not given: scripts, pipes and
// files see nothing.

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/strato-io/strato/bytesize"
)

// progressEvery spaces the redraws.
const progressEvery = 100 * time.Millisecond

// progress is one transfer's bar. A nil *progress draws nothing, so
// callers need not check whether there is a terminal.
type progress struct {
	w     io.Writer
	width int // the terminal's columns
	label string
	total int64 // -1: unknown (stdin)
	done  int64
	start time.Time
	drawn time.Time
	now   func() time.Time
}

// addQuietFlag registers --quiet on a transfer command.
func addQuietFlag(cmd *cobra.Command, quiet *bool) {
	cmd.Flags().BoolVar(quiet, "quiet", false, "no progress bar (there is none either when stderr is not a terminal)")
}

// terminalWidth returns the columns of w when it is a terminal.
func terminalWidth(w io.Writer) (int, bool) {
	f, ok := w.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return 0, false
	}
	cols, _, err := term.GetSize(int(f.Fd()))
	if err != nil || cols < 40 {
		cols = 80
	}
	return cols, true
}

// newProgress starts a bar for a transfer of total bytes (-1: unknown)
// named label, or returns nil when quiet or stderr is not a terminal.
func newProgress(s *session, quiet bool, label string, total int64) *progress {
	w := s.cmd.ErrOrStderr()
	cols, ok := terminalWidth(w)
	if quiet || !ok {
		return nil
	}
	p := &progress{w: w, width: cols, label: label, total: total, now: time.Now}
	p.start = p.now()
	p.draw(false)
	return p
}

// Write counts len(b) bytes moved (io.Writer, for io.TeeReader and
// io.MultiWriter); it never fails.
func (p *progress) Write(b []byte) (int, error) {
	p.add(int64(len(b)))
	return len(b), nil
}

// add counts n bytes moved and redraws at most every progressEvery.
func (p *progress) add(n int64) {
	if p == nil {
		return
	}
	p.done += n
	if p.now().Sub(p.drawn) >= progressEvery {
		p.draw(false)
	}
}

// reader counts what is read from r.
func (p *progress) reader(r io.Reader) io.Reader {
	if p == nil {
		return r
	}
	return io.TeeReader(r, p)
}

// writer counts what is written to w.
func (p *progress) writer(w io.Writer) io.Writer {
	if p == nil {
		return w
	}
	return io.MultiWriter(w, p)
}

// finish draws the final line (total, time, average rate) and ends it;
// after a failure (ok false) the line is cleared instead, so that the
// error stands alone.
func (p *progress) finish(ok bool) {
	if p == nil {
		return
	}
	if !ok {
		fmt.Fprint(p.w, "\r\x1b[K")
		return
	}
	p.draw(true)
	fmt.Fprintln(p.w)
}

// draw writes the line, replacing the one before.
func (p *progress) draw(final bool) {
	now := p.now()
	p.drawn = now
	elapsed := now.Sub(p.start)
	rate := 0.0
	if s := elapsed.Seconds(); s > 0 {
		rate = float64(p.done) / s
	}
	speed := bytesize.Format(int64(rate)) + "/s"
	var line string
	switch {
	case final:
		took := elapsed.Round(10 * time.Millisecond)
		if elapsed < time.Second {
			took = elapsed.Round(time.Millisecond)
		}
		line = strings.Join([]string{p.label, bytesize.Format(p.done), "in " + took.String(), speed}, "  ")
	case p.total >= 0:
		pct := int64(100)
		if p.total > 0 {
			pct = 100 * min(p.done, p.total) / p.total
		}
		eta := "ETA -"
		if rate > 0 && p.done > 0 {
			eta = "ETA " + time.Duration(float64(max(p.total-p.done, 0))/rate*float64(time.Second)).Round(time.Second).String()
		}
		head := fmt.Sprintf("%s  %s / %s  %3d%%", p.label, bytesize.Format(p.done), bytesize.Format(p.total), pct)
		tail := speed + "  " + eta
		line = head + "  " + tail
		// The bar takes the room the rest leaves, 10 to 40 columns.
		if room := min(p.width-1-len(line)-4, 40); room >= 10 {
			fill := room
			if p.total > 0 {
				fill = int(int64(room) * min(p.done, p.total) / p.total)
			}
			line = head + "  [" + strings.Repeat("#", fill) + strings.Repeat(".", room-fill) + "]  " + tail
		}
	default: // unknown size
		line = strings.Join([]string{p.label, bytesize.Format(p.done), speed}, "  ")
	}
	if len(line) > p.width-1 {
		line = line[:p.width-1]
	}
	fmt.Fprint(p.w, "\r\x1b[K"+line)
}
