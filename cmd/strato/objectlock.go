package main

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"google.golang.org/protobuf/proto"

	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

// S3 object lock from the CLI (docs/s3.md "Object lock"): a version's
// retention and legal hold, shown by sh key info and set by sh key
// retention and sh key legalhold; meta enforces them (decision 0088).

// lockFields are the lines of sh key info that show a version's lock.
func lockFields(l *stratov1.ObjectLock) []field {
	if l == nil {
		return nil
	}
	var fs []field
	if l.GetMode() != stratov1.RetentionMode_RETENTION_UNSPECIFIED {
		fs = append(fs, field{"Retention", enumName(l.GetMode(), "RETENTION_") + " until " +
			time.UnixMilli(l.GetRetainUntilUnixMs()).UTC().Format(time.RFC3339)})
	}
	hold := "OFF"
	if l.GetLegalHold() {
		hold = "ON"
	}
	return append(fs, field{"Legal hold", hold})
}

// bucketLockField is the line of sh bucket info that shows its object lock.
func bucketLockField(l *stratov1.BucketObjectLock) field {
	switch {
	case !l.GetEnabled():
		return field{"Object lock", "disabled"}
	case l.GetDefaultMode() == stratov1.RetentionMode_RETENTION_UNSPECIFIED:
		return field{"Object lock", "enabled, no default retention"}
	case l.GetDefaultYears() > 0:
		return field{"Object lock", fmt.Sprintf("enabled, default %s for %d years", enumName(l.GetDefaultMode(), "RETENTION_"), l.GetDefaultYears())}
	}
	return field{"Object lock", fmt.Sprintf("enabled, default %s for %d days", enumName(l.GetDefaultMode(), "RETENTION_"), l.GetDefaultDays())}
}

// parseUntil reads a retain-until date: RFC 3339, or +DURATION from now
// (e.g. +24h).
func parseUntil(s string, now time.Time) (time.Time, error) {
	if d, ok := strings.CutPrefix(s, "+"); ok {
		dur, err := time.ParseDuration(d)
		if err != nil || dur <= 0 {
			return time.Time{}, usagef("--until: %q is not a positive duration", s)
		}
		return now.Add(dur), nil
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}, usagef("--until: %q is neither an RFC 3339 date nor +DURATION", s)
	}
	return t, nil
}

func newKeyRetentionCmd(o *cliOptions) *cobra.Command {
	var mode, until, version string
	var bypass bool
	cmd := &cobra.Command{
		Use:   "retention /VOLUME/BUCKET/KEY",
		Short: "Set the S3 object lock retention of a key's version (a bucket with object lock)",
		Long: "Set the retention of the latest version of a key, or of --version-id: --mode GOVERNANCE or COMPLIANCE\n" +
			"--until DATE (RFC 3339, or +DURATION from now), or --mode NONE to remove it. A retention in force is\n" +
			"only extended, unless it is GOVERNANCE and --bypass-governance is given by the bucket's owner or an\n" +
			"administrator; a COMPLIANCE retention is never shortened nor removed.",
		Args: exactArgs(1),
		RunE: o.action(func(s *session, args []string) error {
			p, err := keyArg(args[0])
			if err != nil {
				return err
			}
			req := &stratov1.SetObjectLockRequest{Volume: p.Volume, Bucket: p.Bucket, Key: p.Key, VersionId: version,
				SetRetention: true, BypassGovernance: bypass}
			switch strings.ToUpper(mode) {
			case "GOVERNANCE", "COMPLIANCE":
				req.Mode = stratov1.RetentionMode(stratov1.RetentionMode_value["RETENTION_"+strings.ToUpper(mode)])
				if until == "" {
					return usagef("--until is required with --mode %s", mode)
				}
				t, err := parseUntil(until, time.Now())
				if err != nil {
					return err
				}
				req.RetainUntilUnixMs = t.UnixMilli()
			case "NONE":
				if until != "" {
					return usagef("--until with --mode NONE")
				}
			default:
				return usagef("--mode: %q must be GOVERNANCE, COMPLIANCE or NONE", mode)
			}
			res, err := s.c.SetObjectLock(s.ctx, req)
			if err != nil {
				return err
			}
			if s.json {
				return printJSON(s.out, res)
			}
			return nil
		}),
	}
	f := cmd.Flags()
	f.StringVar(&mode, "mode", "", "GOVERNANCE, COMPLIANCE or NONE (required)")
	f.StringVar(&until, "until", "", "retain until this date: RFC 3339 (2030-01-02T15:04:05Z) or +DURATION (+720h)")
	f.StringVar(&version, "version-id", "", "the version (default: the latest)")
	f.BoolVar(&bypass, "bypass-governance", false, "shorten, remove or change a GOVERNANCE retention (the bucket's owner and administrators)")
	return cmd
}

func newKeyLegalHoldCmd(o *cliOptions) *cobra.Command {
	var version string
	cmd := &cobra.Command{
		Use:   "legalhold /VOLUME/BUCKET/KEY on|off",
		Short: "Put an S3 object lock legal hold on a key's version, or take it off (a bucket with object lock)",
		Args:  exactArgs(2),
		RunE: o.action(func(s *session, args []string) error {
			p, err := keyArg(args[0])
			if err != nil {
				return err
			}
			on, err := strconv.ParseBool(map[string]string{"on": "true", "off": "false"}[strings.ToLower(args[1])])
			if err != nil {
				return usagef("%q: want on or off", args[1])
			}
			res, err := s.c.SetObjectLock(s.ctx, &stratov1.SetObjectLockRequest{Volume: p.Volume, Bucket: p.Bucket, Key: p.Key,
				VersionId: version, LegalHold: proto.Bool(on)})
			if err != nil {
				return err
			}
			if s.json {
				return printJSON(s.out, res)
			}
			return nil
		}),
	}
	cmd.Flags().StringVar(&version, "version-id", "", "the version (default: the latest)")
	return cmd
}
