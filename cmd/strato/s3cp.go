package main

// strato s3 cp|mb|ls: a few S3 calls signed with SigV4, for machines
// without the aws cli (make run uses them when it is missing).

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/strato-io/strato/s3"
)

// s3ClientFlags are the endpoint and keys of the S3 client commands.
type s3ClientFlags struct{ endpoint, region string }

func (f *s3ClientFlags) add(cmd *cobra.Command) {
	def := os.Getenv("AWS_ENDPOINT_URL")
	if def == "" {
		def = "http://127.0.0.1:9878"
	}
	cmd.Flags().StringVar(&f.endpoint, "endpoint", def, "the S3 endpoint (default: $AWS_ENDPOINT_URL, else strato dev's gateway)")
	cmd.Flags().StringVar(&f.region, "region", "us-east-1", "the region requests are signed for")
}

func (f *s3ClientFlags) client() (*s3.Client, error) {
	ak, sk := os.Getenv("AWS_ACCESS_KEY_ID"), os.Getenv("AWS_SECRET_ACCESS_KEY")
	if ak == "" || sk == "" {
		return nil, errors.New("set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (strato admin s3 key create makes a key)")
	}
	return s3.NewClient(s3.ClientOptions{Endpoint: f.endpoint, AccessKey: ak, Secret: sk, Region: f.region})
}

// parseS3URL splits s3://BUCKET/KEY.
func parseS3URL(s string) (bucket, key string, ok bool) {
	rest, ok := strings.CutPrefix(s, "s3://")
	if !ok {
		return "", "", false
	}
	bucket, key, _ = strings.Cut(rest, "/")
	return bucket, key, bucket != ""
}

func s3ClientCommands() []*cobra.Command {
	var cpf, mbf, lsf s3ClientFlags
	cp := &cobra.Command{
		Use:   "cp SRC DST",
		Short: "Copy a file to or from S3 (one of SRC and DST is s3://BUCKET/KEY, the other a file or -)",
		Long: `cp uploads a file (PutObject) or downloads one (GetObject) through an S3
endpoint, streamed, signed with AWS Signature Version 4 by the keys in
AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY. It is a few lines for machines
without the aws cli; objects are sent whole (5 GiB at most), never in parts.`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := cpf.client()
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			if b, k, ok := parseS3URL(args[1]); ok {
				if k == "" || strings.HasSuffix(k, "/") {
					k += baseName(args[0])
				}
				return s3Upload(ctx, c, args[0], b, k)
			}
			if b, k, ok := parseS3URL(args[0]); ok && k != "" {
				return s3Download(ctx, c, b, k, args[1], cmd.OutOrStdout())
			}
			return fmt.Errorf("cp: one of %q and %q must be s3://BUCKET/KEY", args[0], args[1])
		},
	}
	cpf.add(cp)
	mb := &cobra.Command{
		Use:   "mb s3://BUCKET",
		Short: "Create a bucket (one that exists is no error)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			b, k, ok := parseS3URL(args[0])
			if !ok || k != "" {
				return fmt.Errorf("mb: %q is not s3://BUCKET", args[0])
			}
			c, err := mbf.client()
			if err != nil {
				return err
			}
			return c.CreateBucket(cmd.Context(), b)
		},
	}
	mbf.add(mb)
	ls := &cobra.Command{
		Use:   "ls s3://BUCKET[/PREFIX]",
		Short: "List the keys of a bucket under a prefix, with their sizes",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			b, prefix, ok := parseS3URL(args[0])
			if !ok {
				return fmt.Errorf("ls: %q is not s3://BUCKET[/PREFIX]", args[0])
			}
			c, err := lsf.client()
			if err != nil {
				return err
			}
			token := ""
			for {
				objs, next, err := c.ListObjects(cmd.Context(), b, prefix, token, 1000)
				if err != nil {
					return err
				}
				for _, o := range objs {
					fmt.Fprintf(cmd.OutOrStdout(), "%12d  %s\n", o.Size, o.Key)
				}
				if next == "" {
					return nil
				}
				token = next
			}
		},
	}
	lsf.add(ls)
	return []*cobra.Command{cp, mb, ls}
}

func baseName(p string) string {
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[i+1:]
	}
	return p
}

func s3Upload(ctx context.Context, c *s3.Client, src, bucket, key string) error {
	var r io.Reader = os.Stdin
	size := int64(-1)
	if src != "-" {
		f, err := os.Open(src)
		if err != nil {
			return err
		}
		defer func() { _ = f.Close() }()
		st, err := f.Stat()
		if err != nil {
			return err
		}
		r, size = f, st.Size()
	}
	_, err := c.PutObject(ctx, bucket, key, r, size)
	return err
}

func s3Download(ctx context.Context, c *s3.Client, bucket, key, dst string, stdout io.Writer) (err error) {
	body, _, err := c.GetObject(ctx, bucket, key)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, body.Close()) }()
	if dst == "-" {
		_, err = io.Copy(stdout, body)
		return err
	}
	f, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, body); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}
