package main

// strato admin s3 key: the access keys of the S3 gateways, kept in meta
// (Ozone's `ozone s3 getsecret` / `revokesecret`).

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"
	"google.golang.org/protobuf/proto"

	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

func newS3AdminCmd(o *cliOptions) *cobra.Command {
	cmd := group("s3", "The S3 gateways' access keys, kept in meta")
	key := group("key", "Create, list and revoke the access keys S3 requests are signed with")
	var user, accessKey string
	var secretStdin bool
	create := &cobra.Command{
		Use:   "create [--user NAME] [--access-key KEY] [--secret-stdin]",
		Short: "Create an access key and its secret (printed once; meta keeps it)",
		Long: `create makes an access key for --user (default: the caller, the user of
the token presented; $USER on a meta without authentication) and prints it with
its secret: give them to an S3 client (AWS_ACCESS_KEY_ID and
AWS_SECRET_ACCESS_KEY). Both are generated unless --access-key names the
key and --secret-stdin reads the secret from standard input. Every S3
gateway of the cluster accepts the key within seconds.`,
		Args: exactArgs(0),
		RunE: o.action(func(s *session, _ []string) error {
			u := user
			if u == "" {
				// With authentication, meta gives the key to the caller.
				who, err := s.c.WhoAmI(s.ctx)
				if err != nil {
					return err
				}
				if !who.GetAuthenticated() {
					u = os.Getenv("USER")
				}
			}
			var secret string
			if secretStdin {
				if _, err := fmt.Fscanln(s.in, &secret); err != nil {
					return fmt.Errorf("reading the secret from standard input: %w", err)
				}
			}
			k, sec, err := s.c.CreateS3Key(s.ctx, u, accessKey, secret)
			if err != nil {
				return err
			}
			if s.json {
				return printJSON(s.out, &stratov1.GetS3SecretResponse{Key: k, Secret: sec})
			}
			return printFields(s.out, []field{
				{"Access key", k.GetAccessKey()},
				{"Secret", sec},
				{"User", k.GetUser()},
			})
		}),
	}
	create.Flags().StringVar(&user, "user", "", "who the key is for (default: the caller; $USER without authentication)")
	create.Flags().StringVar(&accessKey, "access-key", "", "the access key (default: 20 random characters)")
	create.Flags().BoolVar(&secretStdin, "secret-stdin", false, "read the secret from standard input (default: 40 random characters)")
	var listUser string
	list := &cobra.Command{
		Use:   "list [--user NAME]",
		Short: "List the access keys (never their secrets)",
		Args:  exactArgs(0),
		RunE: o.action(func(s *session, _ []string) error {
			keys, err := s.c.ListS3Keys(s.ctx, listUser)
			if err != nil {
				return err
			}
			if s.json {
				return printJSON(s.out, messages(keys))
			}
			rows := make([][]string, 0, len(keys))
			for _, k := range keys {
				rows = append(rows, []string{k.GetAccessKey(), orDash(k.GetUser()), timeMs(k.GetCreatedUnixMs())})
			}
			return printTable(s.out, []string{"ACCESS KEY", "USER", "CREATED"}, rows)
		}),
	}
	list.Flags().StringVar(&listUser, "user", "", "only this user's keys")
	revoke := &cobra.Command{
		Use:   "revoke ACCESS_KEY",
		Short: "Revoke an access key: the gateways refuse it within seconds",
		Args:  exactArgs(1),
		RunE: o.action(func(s *session, args []string) error {
			if err := s.c.RevokeS3Key(s.ctx, args[0]); err != nil {
				return err
			}
			if s.json {
				return printJSON(s.out, proto.Message(&stratov1.S3Key{AccessKey: args[0]}))
			}
			_, err := fmt.Fprintf(s.out, "%s: revoked\n", args[0])
			return err
		}),
	}
	key.AddCommand(create, list, revoke)
	cmd.AddCommand(key)
	return cmd
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
