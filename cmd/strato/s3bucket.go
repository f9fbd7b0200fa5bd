package main

// strato s3 ls|rm|mb|rb|presign: listings, deletes, buckets and presigned
// URLs of the S3 client.

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/spf13/cobra"
)

// s3Bucket and s3Entry are ls's --json rows: a bucket, or a key or (with
// Prefix true) a common prefix.
type (
	s3Bucket struct {
		Name    string    `json:"name"`
		Created time.Time `json:"created"`
	}
	s3Entry struct {
		Key          string     `json:"key"`
		Prefix       bool       `json:"prefix,omitempty"`
		Size         int64      `json:"size"`
		LastModified *time.Time `json:"lastModified,omitempty"`
	}
)

func newS3LsCmd() *cobra.Command {
	var (
		f         s3ClientFlags
		recursive bool
	)
	cmd := &cobra.Command{
		Use:   "ls [s3://BUCKET[/PREFIX]]",
		Short: "List the buckets, or the keys and common prefixes under a prefix with their sizes",
		Long: `ls lists the buckets (no argument, or s3://), or what is under a bucket's
prefix: the keys just below it with their sizes in bytes, and the
directories below it ("PRE dir/"); with --recursive every key below it.`,
		Args: argsBetween(0, 1),
		RunE: s3Action(func(cmd *cobra.Command, args []string) error {
			arg := "s3://"
			if len(args) == 1 {
				arg = args[0]
			}
			b, prefix, ok := parseS3URL(arg)
			if !ok && arg != "s3://" {
				return usagef("%q is not s3://BUCKET[/PREFIX]", arg)
			}
			c, err := f.client()
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if !ok {
				return s3ListBuckets(cmd.Context(), c, out, f.json)
			}
			in := &awss3.ListObjectsV2Input{Bucket: &b, Prefix: &prefix}
			if !recursive {
				in.Delimiter = aws.String("/")
			}
			var rows []s3Entry
			p := awss3.NewListObjectsV2Paginator(c, in)
			for p.HasMorePages() {
				page, err := p.NextPage(cmd.Context())
				if err != nil {
					return err
				}
				if !f.json {
					rows = rows[:0] // printed page by page; JSON is one document
				}
				for _, cp := range page.CommonPrefixes {
					rows = append(rows, s3Entry{Key: aws.ToString(cp.Prefix), Prefix: true})
				}
				for _, o := range page.Contents {
					rows = append(rows, s3Entry{Key: aws.ToString(o.Key), Size: aws.ToInt64(o.Size), LastModified: o.LastModified})
				}
				if f.json {
					continue
				}
				for _, r := range rows {
					if r.Prefix {
						fmt.Fprintf(out, "%12s  %s\n", "PRE", r.Key)
					} else {
						fmt.Fprintf(out, "%12d  %s\n", r.Size, r.Key)
					}
				}
			}
			if f.json {
				return printJSON(out, rowsOrEmpty(rows))
			}
			return nil
		}),
	}
	f.add(cmd)
	cmd.Flags().BoolVarP(&recursive, "recursive", "r", false, "every key under the prefix, not only those just below it")
	cmd.Flags().BoolVar(&f.json, "json", false, "print JSON: [{name, created}] for buckets, [{key, size, lastModified} or {key, prefix: true}] for keys")
	return cmd
}

// rowsOrEmpty makes a nil slice print as [], not null.
func rowsOrEmpty[T any](rows []T) []T {
	if rows == nil {
		return []T{}
	}
	return rows
}

func s3ListBuckets(ctx context.Context, c *awss3.Client, out io.Writer, asJSON bool) error {
	res, err := c.ListBuckets(ctx, &awss3.ListBucketsInput{})
	if err != nil {
		return err
	}
	rows := make([]s3Bucket, 0, len(res.Buckets))
	for _, b := range res.Buckets {
		rows = append(rows, s3Bucket{Name: aws.ToString(b.Name), Created: aws.ToTime(b.CreationDate).UTC()})
	}
	if asJSON {
		return printJSON(out, rows)
	}
	for _, b := range rows {
		fmt.Fprintf(out, "%s  %s\n", b.Created.Format(time.RFC3339), b.Name)
	}
	return nil
}

func newS3RmCmd() *cobra.Command {
	var (
		f         s3ClientFlags
		recursive bool
	)
	cmd := &cobra.Command{
		Use:   "rm s3://BUCKET/KEY",
		Short: "Delete a key, or with --recursive every key under a prefix",
		Long: `rm deletes a key (one that does not exist is no error, as in S3), or with
--recursive every key under s3://BUCKET/PREFIX (the whole bucket when there
is no prefix), a thousand per DeleteObjects request. It prints each key
deleted.`,
		Args: exactArgs(1),
		RunE: s3Action(func(cmd *cobra.Command, args []string) error {
			b, k, ok := parseS3URL(args[0])
			if !ok || (k == "" && !recursive) {
				return usagef("%q is not s3://BUCKET/KEY", args[0])
			}
			c, err := f.client()
			if err != nil {
				return err
			}
			var deleted []string
			if recursive {
				deleted, err = s3DeletePrefix(cmd.Context(), c, b, s3Dir(k))
			} else {
				_, err = c.DeleteObject(cmd.Context(), &awss3.DeleteObjectInput{Bucket: &b, Key: &k})
				deleted = []string{"s3://" + b + "/" + k}
			}
			if err != nil {
				return err
			}
			if f.json {
				return printJSON(cmd.OutOrStdout(), map[string]any{"deleted": rowsOrEmpty(deleted)})
			}
			for _, d := range deleted {
				fmt.Fprintf(cmd.OutOrStdout(), "delete: %s\n", d)
			}
			return nil
		}),
	}
	f.add(cmd)
	cmd.Flags().BoolVarP(&recursive, "recursive", "r", false, "delete every key under the prefix")
	cmd.Flags().BoolVar(&f.json, "json", false, `print JSON: {"deleted": [s3://BUCKET/KEY…]}`)
	return cmd
}

// s3DeletePrefix deletes every key under prefix and returns their URLs.
func s3DeletePrefix(ctx context.Context, c *awss3.Client, bucket, prefix string) ([]string, error) {
	var deleted []string
	batch := make([]types.ObjectIdentifier, 0, 1000)
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		out, err := c.DeleteObjects(ctx, &awss3.DeleteObjectsInput{Bucket: &bucket, Delete: &types.Delete{Objects: batch, Quiet: aws.Bool(true)}})
		if err != nil {
			return err
		}
		if len(out.Errors) > 0 {
			e := out.Errors[0]
			return fmt.Errorf("%s: %s: %s (and %d more)", aws.ToString(e.Key), aws.ToString(e.Code), aws.ToString(e.Message), len(out.Errors)-1)
		}
		for _, o := range batch {
			deleted = append(deleted, "s3://"+bucket+"/"+aws.ToString(o.Key))
		}
		batch = batch[:0]
		return nil
	}
	// The listing goes on from its last key, so deleting the keys already
	// listed does not disturb it.
	err := s3List(ctx, c, bucket, prefix, func(o s3Object) error {
		batch = append(batch, types.ObjectIdentifier{Key: aws.String(o.Key)})
		if len(batch) == cap(batch) {
			return flush()
		}
		return nil
	})
	if err == nil {
		err = flush()
	}
	return deleted, err
}

// s3BucketCommand is a command on the one bucket of its argument,
// s3://BUCKET.
func s3BucketCommand(use, short string, fn func(ctx context.Context, c *awss3.Client, bucket string) error) *cobra.Command {
	var f s3ClientFlags
	cmd := &cobra.Command{
		Use:   use + " s3://BUCKET",
		Short: short,
		Args:  exactArgs(1),
		RunE: s3Action(func(cmd *cobra.Command, args []string) error {
			b, k, ok := parseS3URL(args[0])
			if !ok || k != "" {
				return usagef("%q is not s3://BUCKET", args[0])
			}
			c, err := f.client()
			if err != nil {
				return err
			}
			return fn(cmd.Context(), c, b)
		}),
	}
	f.add(cmd)
	return cmd
}

func newS3MbCmd() *cobra.Command {
	return s3BucketCommand("mb", "Create a bucket (one that exists is no error)", func(ctx context.Context, c *awss3.Client, b string) error {
		_, err := c.CreateBucket(ctx, &awss3.CreateBucketInput{Bucket: &b})
		if code := s3Code(err); code == "BucketAlreadyOwnedByYou" || code == "BucketAlreadyExists" {
			return nil
		}
		return err
	})
}

func newS3RbCmd() *cobra.Command {
	var force bool
	cmd := s3BucketCommand("rb", "Delete an empty bucket; with --force, its keys and unfinished uploads first", func(ctx context.Context, c *awss3.Client, b string) error {
		if force {
			if err := s3EmptyBucket(ctx, c, b); err != nil {
				return err
			}
		}
		_, err := c.DeleteBucket(ctx, &awss3.DeleteBucketInput{Bucket: &b})
		return err
	})
	cmd.Flags().BoolVar(&force, "force", false, "delete every key of the bucket and abort its multipart uploads first")
	return cmd
}

// s3EmptyBucket deletes every key of a bucket and aborts its unfinished
// multipart uploads.
func s3EmptyBucket(ctx context.Context, c *awss3.Client, bucket string) error {
	if _, err := s3DeletePrefix(ctx, c, bucket, ""); err != nil {
		return err
	}
	p := awss3.NewListMultipartUploadsPaginator(c, &awss3.ListMultipartUploadsInput{Bucket: &bucket})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return err
		}
		for _, u := range page.Uploads {
			if _, err := c.AbortMultipartUpload(ctx, &awss3.AbortMultipartUploadInput{Bucket: &bucket, Key: u.Key, UploadId: u.UploadId}); err != nil && s3Code(err) != "NoSuchUpload" {
				return err
			}
		}
	}
	return nil
}

func newS3PresignCmd() *cobra.Command {
	var (
		f         s3ClientFlags
		expiresIn int
	)
	cmd := &cobra.Command{
		Use:   "presign s3://BUCKET/KEY",
		Short: "Print a URL that GETs a key without credentials until it expires",
		Long: `presign prints a URL, signed with the keys of AWS_ACCESS_KEY_ID and
AWS_SECRET_ACCESS_KEY (SigV4 query parameters), that anyone may GET the key
with for --expires-in seconds (at most 604800, 7 days). Nothing is sent to
the endpoint.`,
		Args: exactArgs(1),
		RunE: s3Action(func(cmd *cobra.Command, args []string) error {
			b, k, ok := parseS3URL(args[0])
			if !ok || k == "" {
				return usagef("%q is not s3://BUCKET/KEY", args[0])
			}
			if expiresIn < 1 || expiresIn > 604800 {
				return usagef("--expires-in %d: want 1 to 604800 seconds", expiresIn)
			}
			c, err := f.client()
			if err != nil {
				return err
			}
			d := time.Duration(expiresIn) * time.Second
			req, err := awss3.NewPresignClient(c).PresignGetObject(cmd.Context(), &awss3.GetObjectInput{Bucket: &b, Key: &k}, awss3.WithPresignExpires(d))
			if err != nil {
				return err
			}
			if f.json {
				return printJSON(cmd.OutOrStdout(), map[string]any{"url": req.URL, "expiresIn": expiresIn})
			}
			fmt.Fprintln(cmd.OutOrStdout(), req.URL)
			return nil
		}),
	}
	f.add(cmd)
	cmd.Flags().IntVar(&expiresIn, "expires-in", 3600, "seconds the URL is good for (1 to 604800)")
	cmd.Flags().BoolVar(&f.json, "json", false, `print JSON: {"url", "expiresIn"}`)
	return cmd
}
