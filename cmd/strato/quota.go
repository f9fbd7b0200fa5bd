package main

// strato sh volume|bucket setquota, clrquota and update: what changes of a
// volume or a bucket after its creation, as `ozone sh` offers it.

import (
	"github.com/spf13/cobra"
	"google.golang.org/protobuf/proto"

	"github.com/strato-io/strato/client"
	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

// quotaTarget names what a quota command changes: a volume (bucket "") or
// a bucket.
type quotaTarget struct {
	what  string // "volume" or "bucket"
	use   string // the argument as the usage line shows it
	names string // what the namespace quota counts
}

var (
	volumeQuota = quotaTarget{"volume", "/VOLUME", "buckets"}
	bucketQuota = quotaTarget{"bucket", "/VOLUME/BUCKET", "keys and directories"}
)

// parse returns the volume and bucket an argument names.
func (t quotaTarget) parse(arg string) (volume, bucket string, err error) {
	if t.what == "volume" {
		volume, err = volumeArg(arg)
		return volume, "", err
	}
	p, err := bucketArg(arg)
	return p.Volume, p.Bucket, err
}

// newQuotaCmds returns setquota and clrquota for t.
func newQuotaCmds(o *cliOptions, t quotaTarget) []*cobra.Command {
	var bytes string
	var names int64
	set := &cobra.Command{
		Use:   "setquota " + t.use + " [--bytes SIZE] [--namespace N]",
		Short: "Set the " + t.what + "'s quota of bytes, of " + t.names + ", or both (one not given stays as it is; administrators only)",
		Args:  exactArgs(1),
		RunE: o.action(func(s *session, args []string) error {
			volume, bucket, err := t.parse(args[0])
			if err != nil {
				return err
			}
			var q client.Quota
			if s.cmd.Flags().Changed("bytes") {
				n, err := parseSize("bytes", bytes)
				if err != nil {
					return err
				}
				q.Bytes = &n
			}
			if s.cmd.Flags().Changed("namespace") {
				if names < 0 {
					return usagef("--namespace %d: must be 0 (unlimited) or more", names)
				}
				q.Namespace = proto.Int64(names)
			}
			if q.Bytes == nil && q.Namespace == nil {
				return usagef("give --bytes, --namespace or both")
			}
			return setQuota(s, t, volume, bucket, q)
		}),
	}
	set.Flags().StringVar(&bytes, "bytes", "", "most logical bytes the "+t.what+"'s keys may hold, e.g. 1TiB (0: unlimited)")
	set.Flags().Int64Var(&names, "namespace", 0, "most "+t.names+" the "+t.what+" may hold (0: unlimited)")

	var clrBytes, clrNames bool
	clr := &cobra.Command{
		Use:   "clrquota " + t.use + " [--bytes] [--namespace]",
		Short: "Clear the " + t.what + "'s quota of bytes, of " + t.names + ", or (without a flag) both (administrators only)",
		Args:  exactArgs(1),
		RunE: o.action(func(s *session, args []string) error {
			volume, bucket, err := t.parse(args[0])
			if err != nil {
				return err
			}
			var q client.Quota
			if clrBytes || !clrNames {
				q.Bytes = proto.Int64(0)
			}
			if clrNames || !clrBytes {
				q.Namespace = proto.Int64(0)
			}
			return setQuota(s, t, volume, bucket, q)
		}),
	}
	clr.Flags().BoolVar(&clrBytes, "bytes", false, "clear the quota of bytes")
	clr.Flags().BoolVar(&clrNames, "namespace", false, "clear the quota of "+t.names)
	return []*cobra.Command{set, clr}
}

// setQuota sends the change and, with --json, prints the volume or bucket
// as it is now.
func setQuota(s *session, t quotaTarget, volume, bucket string, q client.Quota) error {
	if err := s.c.SetQuota(s.ctx, volume, bucket, q); err != nil {
		return err
	}
	return printUpdated(s, t, volume, bucket)
}

// printUpdated prints, with --json, the volume or bucket as it is now
// (the text output of a change is nothing, as create's).
func printUpdated(s *session, t quotaTarget, volume, bucket string) error {
	if !s.json {
		return nil
	}
	if t.what == "volume" {
		v, err := s.c.GetVolume(s.ctx, volume)
		if err != nil {
			return err
		}
		return printJSON(s.out, v)
	}
	b, err := s.c.GetBucket(s.ctx, volume, bucket)
	if err != nil {
		return err
	}
	return printJSON(s.out, b)
}

func newVolumeUpdateCmd(o *cliOptions) *cobra.Command {
	var owner string
	cmd := &cobra.Command{
		Use:   "update /VOLUME --owner USER",
		Short: "Give a volume a new owner (administrators only)",
		Args:  exactArgs(1),
		RunE: o.action(func(s *session, args []string) error {
			name, err := volumeArg(args[0])
			if err != nil {
				return err
			}
			if owner == "" {
				return usagef("--owner: required (the volume's new owner)")
			}
			v, err := s.c.UpdateVolume(s.ctx, name, owner)
			if err != nil || !s.json {
				return err
			}
			return printJSON(s.out, v)
		}),
	}
	cmd.Flags().StringVar(&owner, "owner", "", "the volume's new owner")
	return cmd
}

func newBucketUpdateCmd(o *cliOptions) *cobra.Command {
	var owner, replication, quotaBytes, versioning string
	cmd := &cobra.Command{
		Use:   "update /VOLUME/BUCKET [--owner USER] [--replication ONE|THREE|rs-3-2-1024k] [--versioning enabled|suspended] [--quota-bytes SIZE]",
		Short: "Change a bucket's owner (administrators only), the redundancy of the keys written to it from now on, its S3 versioning, or its quota of bytes",
		Args:  exactArgs(1),
		RunE: o.action(func(s *session, args []string) error {
			p, err := bucketArg(args[0])
			if err != nil {
				return err
			}
			req := &stratov1.UpdateBucketRequest{Volume: p.Volume, Name: p.Bucket, Owner: owner}
			if replication != "" {
				if req.Replication, req.ErasureCoding, err = parseReplication(replication); err != nil {
					return err
				}
			}
			if versioning != "" {
				v, err := parseEnum("versioning", versioning, "VERSIONING_", stratov1.BucketVersioning_value)
				if err != nil {
					return err
				}
				req.Versioning = stratov1.BucketVersioning(v)
			}
			var q client.Quota
			if s.cmd.Flags().Changed("quota-bytes") {
				n, err := parseSize("quota-bytes", quotaBytes)
				if err != nil {
					return err
				}
				q.Bytes = &n
			}
			changes := owner != "" || replication != "" || versioning != ""
			if !changes && q.Bytes == nil {
				return usagef("give --owner, --replication, --versioning or --quota-bytes")
			}
			if changes {
				if _, err := s.c.UpdateBucket(s.ctx, req); err != nil {
					return err
				}
			}
			if q.Bytes != nil {
				if err := s.c.SetQuota(s.ctx, p.Volume, p.Bucket, q); err != nil {
					return err
				}
			}
			return printUpdated(s, bucketQuota, p.Volume, p.Bucket)
		}),
	}
	f := cmd.Flags()
	f.StringVar(&owner, "owner", "", "the bucket's new owner")
	f.StringVar(&replication, "replication", "", "redundancy of the keys written from now on without one of their own: ONE, THREE or an erasure code (rs-3-2-1024k); the keys already written keep theirs")
	f.StringVar(&quotaBytes, "quota-bytes", "", "most logical bytes the bucket's keys may hold, e.g. 1TiB (0: unlimited; as setquota --bytes)")
	f.StringVar(&versioning, "versioning", "", "S3 versioning of an object-store bucket: enabled or suspended (never back to unversioned)")
	return cmd
}

// versioningName is a bucket's S3 versioning as the CLI shows it.
func versioningName(v stratov1.BucketVersioning) string {
	if v == stratov1.BucketVersioning_VERSIONING_UNSPECIFIED {
		return "UNVERSIONED"
	}
	return enumName(v, "VERSIONING_")
}
