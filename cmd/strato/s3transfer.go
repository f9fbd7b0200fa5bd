package main

// strato s3 cp: uploads, downloads and server-side copies, one key or, with
// --recursive, a directory or a prefix.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/s3/transfermanager"
	tmtypes "github.com/aws/aws-sdk-go-v2/feature/s3/transfermanager/types"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/spf13/cobra"

	"github.com/strato-io/strato/bytesize"
)

// s3Transfer is one object moved by cp, as --json prints it.
type s3Transfer struct {
	Source      string `json:"source"`
	Destination string `json:"destination"`
	Bytes       int64  `json:"bytes"`
}

// s3Copier holds what cp's transfers share.
type s3Copier struct {
	c           *awss3.Client
	tm          *transfermanager.Client
	partSize    int64
	threshold   int64
	concurrency int
	bar         *syncProgress
	stdin       io.Reader
	stdout      io.Writer
}

func newS3CpCmd() *cobra.Command {
	var (
		f           s3ClientFlags
		recursive   bool
		quiet       bool
		partSize    string
		threshold   string
		concurrency int
	)
	cmd := &cobra.Command{
		Use:   "cp SRC DST",
		Short: "Copy files to, from or within S3 (SRC and DST: a file, -, or s3://BUCKET/KEY)",
		Long: `cp uploads a file (- for stdin) to s3://BUCKET/KEY, downloads a key to a
file (- for stdout), or copies a key to another one on the server. A KEY
that is empty or ends in / takes the source's base name, as does a
download into a directory. With --recursive, SRC is a directory or a
prefix, and every file or key below it is copied to the same path below
DST.

Sources larger than --multipart-threshold are uploaded in parts of
--part-size, --concurrency at a time, and copied with UploadPartCopy in
ranges of that size; downloads fetch ranges of --part-size in parallel.
Every request is retried by the AWS SDK's standard retryer. Keys come
from AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY. A progress bar on a
terminal (not with --quiet).`,
		Args: exactArgs(2),
		RunE: s3Action(func(cmd *cobra.Command, args []string) error {
			ps, err := bytesize.Parse(partSize)
			if err != nil || ps < 5<<20 || ps > 5<<30 {
				return usagef("--part-size %q: want a size from 5MiB to 5GiB", partSize)
			}
			th, err := bytesize.Parse(threshold)
			if err != nil || th < 1 {
				return usagef("--multipart-threshold %q: want a size of at least 1 byte", threshold)
			}
			if concurrency < 1 {
				return usagef("--concurrency %d: want at least 1", concurrency)
			}
			c, err := f.client()
			if err != nil {
				return err
			}
			cp := &s3Copier{c: c, partSize: ps, threshold: th, concurrency: concurrency, stdin: cmd.InOrStdin(), stdout: cmd.OutOrStdout()}
			cp.tm = cp.manager()
			plan, err := cp.plan(cmd.Context(), args[0], args[1], recursive)
			if err != nil {
				return err
			}
			total, label := int64(0), fmt.Sprintf("%d objects", len(plan))
			for _, t := range plan {
				total = max(total+t.Bytes, -1) // a size of -1 (stdin): unknown
			}
			if len(plan) == 1 {
				label = plan[0].Destination
			}
			if args[1] == "-" {
				quiet = true // the bar would mix with what the terminal shows
			}
			cp.bar = &syncProgress{p: newProgress(&session{cmd: cmd}, quiet, label, total)}
			for i := range plan {
				if err := cp.transfer(cmd.Context(), &plan[i]); err != nil {
					cp.bar.finish(false)
					return err
				}
			}
			cp.bar.finish(true)
			if f.json {
				return printJSON(cmd.OutOrStdout(), plan)
			}
			return nil
		}),
	}
	f.add(cmd)
	fl := cmd.Flags()
	fl.BoolVarP(&recursive, "recursive", "r", false, "copy every file of a directory, or every key under a prefix")
	fl.StringVar(&partSize, "part-size", "16MiB", "the size of the parts of an upload or copy and of a download's ranges (5MiB to 5GiB)")
	fl.StringVar(&threshold, "multipart-threshold", "16MiB", "uploads and copies of this size or less go in one request, larger ones in parts")
	fl.IntVar(&concurrency, "concurrency", 8, "parts or ranges moved at once")
	fl.BoolVar(&f.json, "json", false, "print what was copied as JSON: [{source, destination, bytes}]")
	addQuietFlag(cmd, &quiet)
	return cmd
}

// plan lists the objects to move, with their sizes (-1: stdin, unknown).
func (cp *s3Copier) plan(ctx context.Context, src, dst string, recursive bool) ([]s3Transfer, error) {
	sb, sk, srcS3 := parseS3URL(src)
	db, dk, dstS3 := parseS3URL(dst)
	switch {
	case !srcS3 && !dstS3:
		return nil, usagef("one of %q and %q must be s3://BUCKET[/KEY]", src, dst)
	case (strings.HasPrefix(src, "s3://") && !srcS3) || (strings.HasPrefix(dst, "s3://") && !dstS3):
		return nil, usagef("s3://BUCKET[/KEY] with no bucket")
	case recursive && (src == "-" || dst == "-"):
		return nil, usagef("--recursive copies directories, not stdin or stdout")
	case recursive && srcS3:
		var plan []s3Transfer
		prefix := s3Dir(sk)
		err := s3List(ctx, cp.c, sb, prefix, func(o s3Object) error {
			rel := strings.TrimPrefix(o.Key, prefix)
			if rel == "" || strings.HasSuffix(rel, "/") {
				return nil // a directory marker
			}
			to := ""
			if dstS3 {
				to = "s3://" + db + "/" + s3Dir(dk) + rel
			} else {
				p, err := localPath(dst, rel)
				if err != nil {
					return err
				}
				to = p
			}
			plan = append(plan, s3Transfer{Source: "s3://" + sb + "/" + o.Key, Destination: to, Bytes: o.Size})
			return nil
		})
		return plan, err
	case recursive:
		if st, err := os.Stat(src); err != nil {
			return nil, err
		} else if !st.IsDir() {
			return nil, usagef("%s is not a directory (--recursive copies directories)", src)
		}
		var plan []s3Transfer
		err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
			if err != nil || !d.Type().IsRegular() {
				return err
			}
			info, err := d.Info()
			if err != nil {
				return err
			}
			rel, err := filepath.Rel(src, p)
			if err != nil {
				return err
			}
			plan = append(plan, s3Transfer{Source: p, Destination: "s3://" + db + "/" + s3Dir(dk) + filepath.ToSlash(rel), Bytes: info.Size()})
			return nil
		})
		return plan, err
	case srcS3 && sk == "":
		return nil, usagef("%q names no key (--recursive copies a whole bucket)", src)
	}
	t := s3Transfer{Source: src, Destination: dst, Bytes: -1}
	if dstS3 && (dk == "" || strings.HasSuffix(dk, "/")) {
		if src == "-" {
			return nil, usagef("%q names no key for stdin", dst)
		}
		name := baseName(filepath.ToSlash(src))
		if srcS3 {
			name = baseName(sk)
		}
		t.Destination = "s3://" + db + "/" + dk + name
	}
	if srcS3 {
		head, err := cp.c.HeadObject(ctx, &awss3.HeadObjectInput{Bucket: &sb, Key: &sk})
		if err != nil {
			if s3Code(err) == "NotFound" {
				return nil, fmt.Errorf("NoSuchKey: %s does not exist", src)
			}
			return nil, err
		}
		t.Bytes = aws.ToInt64(head.ContentLength)
		if st, err := os.Stat(dst); !dstS3 && (strings.HasSuffix(dst, string(filepath.Separator)) || err == nil && st.IsDir()) {
			t.Destination = filepath.Join(dst, baseName(sk))
		}
	} else if src != "-" {
		st, err := os.Stat(src)
		if err != nil {
			return nil, err
		}
		if st.IsDir() {
			return nil, usagef("%s is a directory (use --recursive)", src)
		}
		t.Bytes = st.Size()
	}
	return []s3Transfer{t}, nil
}

// transfer moves one object.
func (cp *s3Copier) transfer(ctx context.Context, t *s3Transfer) error {
	sb, sk, srcS3 := parseS3URL(t.Source)
	db, dk, dstS3 := parseS3URL(t.Destination)
	switch {
	case srcS3 && dstS3:
		return cp.copy(ctx, sb, sk, db, dk, t.Bytes)
	case dstS3:
		return cp.upload(ctx, t, db, dk)
	default:
		return cp.download(ctx, sb, sk, t.Destination, t.Bytes)
	}
}

// upload sends a file or stdin, in parts when it is larger than one.
func (cp *s3Copier) upload(ctx context.Context, t *s3Transfer, bucket, key string) error {
	r := cp.stdin
	if t.Source != "-" {
		f, err := os.Open(t.Source)
		if err != nil {
			return err
		}
		defer func() { _ = f.Close() }()
		r = f
	}
	counted := &countingReader{r: r, p: cp.bar}
	_, err := cp.tm.UploadObject(ctx, &transfermanager.UploadObjectInput{Bucket: &bucket, Key: &key, Body: counted})
	if t.Bytes < 0 {
		t.Bytes = counted.n
	}
	return err
}

// countingReader counts what is read from r (parts are read one after the
// other, then sent in parallel).
type countingReader struct {
	r io.Reader
	n int64
	p *syncProgress
}

func (c *countingReader) Read(b []byte) (int, error) {
	n, err := c.r.Read(b)
	c.n += int64(n)
	c.p.add(int64(n))
	return n, err
}

// download fetches a key into a file in ranges fetched in parallel, or to
// stdout in one stream.
func (cp *s3Copier) download(ctx context.Context, bucket, key, dst string, size int64) (err error) {
	if dst == "-" {
		out, err := cp.c.GetObject(ctx, &awss3.GetObjectInput{Bucket: &bucket, Key: &key})
		if err != nil {
			return err
		}
		defer func() { err = errors.Join(err, out.Body.Close()) }()
		_, err = io.Copy(io.MultiWriter(cp.stdout, cp.bar), out.Body)
		return err
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	f, err := os.Create(dst)
	if err != nil {
		return err
	}
	out, err := cp.tm.DownloadObject(ctx, &transfermanager.DownloadObjectInput{Bucket: &bucket, Key: &key, WriterAt: countingWriterAt{w: f, p: cp.bar}})
	n := int64(-1)
	if err == nil {
		n = aws.ToInt64(out.ContentLength)
	}
	if err == nil && n != size {
		err = fmt.Errorf("%s: got %d bytes of %d (changed while read?)", dst, n, size)
	}
	if err != nil {
		_ = f.Close()
		_ = os.Remove(dst)
		return err
	}
	return f.Close()
}

// manager is the SDK's transfer manager with cp's part size, threshold
// and concurrency; downloads fetch byte ranges (not parts, which would
// follow the upload's part sizes).
func (cp *s3Copier) manager() *transfermanager.Client {
	return transfermanager.New(cp.c, func(o *transfermanager.Options) {
		o.PartSizeBytes, o.MultipartUploadThreshold, o.Concurrency = cp.partSize, cp.threshold, cp.concurrency
		o.GetObjectType = tmtypes.GetObjectRanges
		o.RequestChecksumCalculation = aws.RequestChecksumCalculationWhenRequired
		o.DisableChecksumValidation = true
	})
}

// copySource is x-amz-copy-source: bucket/key, each segment URL-encoded.
func copySource(bucket, key string) string {
	segs := strings.Split(key, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return bucket + "/" + strings.Join(segs, "/")
}

// copy copies a key on the server: one CopyObject, or, above the
// threshold (or 5 GiB, CopyObject's limit), UploadPartCopy of part-size
// ranges, concurrency at a time.
func (cp *s3Copier) copy(ctx context.Context, sb, sk, db, dk string, size int64) error {
	src := copySource(sb, sk)
	if size <= min(cp.threshold, 5<<30) {
		_, err := cp.c.CopyObject(ctx, &awss3.CopyObjectInput{Bucket: &db, Key: &dk, CopySource: &src})
		if err == nil {
			cp.bar.add(size)
		}
		return err
	}
	mu, err := cp.c.CreateMultipartUpload(ctx, &awss3.CreateMultipartUploadInput{Bucket: &db, Key: &dk})
	if err != nil {
		return err
	}
	parts := make([]types.CompletedPart, (size+cp.partSize-1)/cp.partSize)
	errs := make([]error, len(parts))
	sem := make(chan struct{}, cp.concurrency)
	var wg sync.WaitGroup
	for i := range parts {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			first := int64(i) * cp.partSize
			last := min(first+cp.partSize, size) - 1
			out, err := cp.c.UploadPartCopy(ctx, &awss3.UploadPartCopyInput{
				Bucket: &db, Key: &dk, UploadId: mu.UploadId, PartNumber: aws.Int32(int32(i + 1)),
				CopySource: &src, CopySourceRange: aws.String(fmt.Sprintf("bytes=%d-%d", first, last)),
			})
			if err != nil {
				errs[i] = err
				return
			}
			parts[i] = types.CompletedPart{ETag: out.CopyPartResult.ETag, PartNumber: aws.Int32(int32(i + 1))}
			cp.bar.add(last - first + 1)
		}()
	}
	wg.Wait()
	err = errors.Join(errs...)
	if err == nil {
		_, err = cp.c.CompleteMultipartUpload(ctx, &awss3.CompleteMultipartUploadInput{
			Bucket: &db, Key: &dk, UploadId: mu.UploadId, MultipartUpload: &types.CompletedMultipartUpload{Parts: parts},
		})
	}
	if err != nil {
		// A fresh context: the caller's may be why it failed.
		_, _ = cp.c.AbortMultipartUpload(context.WithoutCancel(ctx), &awss3.AbortMultipartUploadInput{Bucket: &db, Key: &dk, UploadId: mu.UploadId})
	}
	return err
}
