package teragen

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"sync"
	"time"
)

// ReadResult is a read-back's outcome.
type ReadResult struct {
	Bytes    int64
	Elapsed  time.Duration
	Checksum Checksum
}

// MBPerSec is the read rate in 10^6 bytes per second.
func (r ReadResult) MBPerSec() float64 { return float64(r.Bytes) / 1e6 / r.Elapsed.Seconds() }

// Read reads the part files of a TeraGen output written by `writers`
// writers back, one reader per file, all at once, in read calls of bufSize
// bytes (the HDFS anchor's read-back: 1 MiB read() calls), and, with
// checksum, recomputes TeraGen's checksum from the rows (the caller compares
// it with the writer's).
func Read(ctx context.Context, dir string, writers, bufSize int, checksum bool, fs FileOpener, out io.Writer) (ReadResult, error) {
	if writers < 1 || bufSize < 100 {
		return ReadResult{}, errors.New("bench: read-back needs writers >= 1 and a buffer of at least one row")
	}
	bufSize -= bufSize % 100 // whole rows per read call keep the checksum simple
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		total ReadResult
		errs  = make([]error, writers)
	)
	start := time.Now()
	for i := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p := path.Join(dir, PartName(i))
			t0 := time.Now()
			f, err := fs.Open(ctx, p)
			if err != nil {
				errs[i] = err
				return
			}
			defer func() { _ = f.Close() }()
			buf := make([]byte, bufSize)
			var sum Checksum
			var n int64
			for {
				k, err := io.ReadFull(f, buf)
				for r := 0; checksum && r+100 <= k; r += 100 {
					sum.AddRow(buf[r : r+100])
				}
				n += int64(k)
				if err == io.EOF || err == io.ErrUnexpectedEOF {
					break
				}
				if err != nil {
					errs[i] = fmt.Errorf("read %s: %w", p, err)
					return
				}
			}
			el := time.Since(t0)
			mu.Lock()
			defer mu.Unlock()
			fmt.Fprintf(out, "reader %d: %s, %d bytes, %d ms, %.1f MB/s\n", i, p, n, el.Milliseconds(), float64(n)/1e6/el.Seconds())
			total.Bytes += n
			total.Checksum.Merge(sum)
		}()
	}
	wg.Wait()
	total.Elapsed = time.Since(start)
	if err := errors.Join(errs...); err != nil {
		return total, err
	}
	fmt.Fprintf(out, "read back: %d bytes in %.3f s, %.1f MB/s", total.Bytes, total.Elapsed.Seconds(), total.MBPerSec())
	if checksum {
		fmt.Fprintf(out, ", CHECKSUM=%d", total.Checksum.Counter())
	}
	fmt.Fprintln(out)
	return total, nil
}
