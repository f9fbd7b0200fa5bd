package measure

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"time"
)

// DDResult is the disk's sequential write rate measured by dd with direct
// I/O, the reference the 4 MiB chunk-write target is set against.
type DDResult struct {
	Command string
	Bytes   int64
	Elapsed time.Duration
}

// MBPerSec is the rate in MB (10^6 bytes) per second, as dd prints it.
func (r DDResult) MBPerSec() float64 { return float64(r.Bytes) / 1e6 / r.Elapsed.Seconds() }

var ddCopied = regexp.MustCompile(`(\d+) bytes .*copied, ([0-9.,e+-]+) s`)

// DD runs `dd if=/dev/zero of=<dir>/dd.out bs=4M count=<count>
// oflag=direct` and removes the file afterwards. The time is dd's own.
func DD(ctx context.Context, dir string, count int) (DDResult, error) {
	if count <= 0 {
		count = 1024
	}
	f, err := os.CreateTemp(dir, "dd-*.out")
	if err != nil {
		return DDResult{}, fmt.Errorf("bench: dd: %w", err)
	}
	path := f.Name()
	f.Close()
	defer func() { _ = os.Remove(path) }()
	args := []string{"if=/dev/zero", "of=" + path, "bs=4M", "count=" + strconv.Itoa(count), "oflag=direct"}
	cmd := exec.CommandContext(ctx, "dd", args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	start := time.Now()
	err = cmd.Run()
	wall := time.Since(start)
	if err != nil {
		return DDResult{}, fmt.Errorf("bench: dd %v: %w: %s", args, err, stderr.String())
	}
	res := DDResult{Command: "dd " + joinArgs(args, filepath.Base(path)), Bytes: int64(count) * 4 << 20, Elapsed: wall}
	if m := ddCopied.FindStringSubmatch(stderr.String()); m != nil {
		if n, err := strconv.ParseInt(m[1], 10, 64); err == nil {
			res.Bytes = n
		}
		if s, err := strconv.ParseFloat(string(bytes.ReplaceAll([]byte(m[2]), []byte(","), []byte("."))), 64); err == nil && s > 0 {
			res.Elapsed = time.Duration(s * float64(time.Second))
		}
	}
	return res, nil
}

func joinArgs(args []string, file string) string {
	var b bytes.Buffer
	for i, a := range args {
		if i > 0 {
			b.WriteByte(' ')
		}
		if i == 1 {
			a = "of=" + file
		}
		b.WriteString(a)
	}
	return b.String()
}
