// strato sh bucket lifecycle: a bucket's S3 lifecycle rules, in the JSON
// of S3's API (docs/s3.md, "Lifecycle").

package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	stratov1 "github.com/strato-io/strato/proto/strato/v1"
	"github.com/strato-io/strato/s3"
)

func newBucketLifecycleCmd(o *cliOptions) *cobra.Command {
	var set, multipartVolume string
	var clear bool
	cmd := &cobra.Command{
		Use:   "lifecycle /VOLUME/BUCKET [--set FILE.json | --clear]",
		Short: "Show, set or remove an object-store bucket's S3 lifecycle rules (the JSON of aws s3api put-bucket-lifecycle-configuration)",
		Long: `lifecycle prints the bucket's lifecycle rules as S3's API gives them
(JSON); --set replaces them with the rules of FILE ("-": standard input),
{"Rules": [{"ID": "logs", "Status": "Enabled", "Filter": {"Prefix": "logs/"},
"Expiration": {"Days": 30}}]}, checked as PutBucketLifecycleConfiguration
checks them; --clear removes them. Meta's leader carries them out.`,
		Args: exactArgs(1),
		RunE: o.action(func(s *session, args []string) error {
			p, err := bucketArg(args[0])
			if err != nil {
				return err
			}
			switch {
			case set != "" && clear:
				return usagef("give --set or --clear, not both")
			case set != "":
				data, err := readFileOrStdin(set)
				if err != nil {
					return err
				}
				if multipartVolume == "" {
					multipartVolume = p.Volume + "-multipart"
				}
				lc, err := s3.LifecycleFromJSON(data, multipartVolume)
				if err != nil {
					return usagef("%v", err)
				}
				_, err = s.c.UpdateBucket(s.ctx, &stratov1.UpdateBucketRequest{Volume: p.Volume, Name: p.Bucket, Lifecycle: lc})
				return err
			case clear:
				_, err := s.c.UpdateBucket(s.ctx, &stratov1.UpdateBucketRequest{Volume: p.Volume, Name: p.Bucket, ClearLifecycle: true})
				return err
			}
			b, err := s.c.GetBucket(s.ctx, p.Volume, p.Bucket)
			if err != nil {
				return err
			}
			if b.GetLifecycle() == nil {
				return errors.New("the bucket has no lifecycle rules")
			}
			out, err := s3.LifecycleJSON(b.GetLifecycle())
			if err != nil {
				return err
			}
			_, err = fmt.Fprintf(s.out, "%s\n", out)
			return err
		}),
	}
	f := cmd.Flags()
	f.StringVar(&set, "set", "", `replace the rules with those of this JSON file ("-": standard input)`)
	f.BoolVar(&clear, "clear", false, "remove the rules")
	f.StringVar(&multipartVolume, "multipart-volume", "", "with --set: the S3 gateway's volume of multipart uploads, which abort rules apply to (default: VOLUME-multipart, the gateway's)")
	return cmd
}

// readFileOrStdin reads name, or standard input for "-".
func readFileOrStdin(name string) ([]byte, error) {
	if name == "-" {
		return io.ReadAll(os.Stdin)
	}
	return os.ReadFile(name)
}
