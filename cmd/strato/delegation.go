package main

import (
	"encoding/binary"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"google.golang.org/protobuf/proto"

	"github.com/strato-io/strato/meta"
	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

// newDelegationTokenCmd is `strato admin token delegation`: delegation
// tokens (docs/decisions/0082-delegation-tokens.md).
func newDelegationTokenCmd(o *cliOptions) *cobra.Command {
	cmd := group("delegation", "Get, renew, cancel and list delegation tokens (for jobs: Hadoop's TokenCache, dtutil)")
	var renewer, out, format, service string
	get := &cobra.Command{
		Use:   "get [--renewer R] [--out FILE [--format strato|hadoop]]",
		Short: "Get a delegation token that acts as you, renewable by --renewer (default: yourself)",
		Long: `get issues a delegation token for you (you present your own token, not a
delegation token) that --renewer may renew (a user, or a principal such as
yarn/host@REALM whose short name is one; default: yourself). It expires after
meta's renew interval (default 24h) unless renewed, and never outlives its
max date (default 7 days after its issue). It prints the token, or with
--out writes it to FILE (mode 0600): --format strato (the default) the
token alone, as --token and $STRATO_TOKEN take it; --format hadoop a Hadoop
token storage file (hadoop dtutil print FILE, HADOOP_TOKEN_FILE_LOCATION)
whose token's service is --service (default strato:<the meta addresses>,
what the connector's getCanonicalServiceName says for them).`,
		Args: exactArgs(0),
		RunE: o.action(func(s *session, _ []string) error {
			if format != "strato" && format != "hadoop" {
				return usagef("--format is strato or hadoop, not %q", format)
			}
			resp, err := s.c.GetDelegationToken(s.ctx, renewer)
			if err != nil {
				return err
			}
			if out != "" {
				data := []byte(resp.GetToken() + "\n")
				if format == "hadoop" {
					if service == "" {
						service = "strato:" + strings.Join(s.addrs, ",")
					}
					data = hadoopTokenStorage(service, service, resp.GetIdentifier(), resp.GetPassword())
				}
				if err := os.WriteFile(out, data, 0o600); err != nil {
					return err
				}
			}
			if s.json {
				if out != "" {
					resp.Token, resp.Password = "", nil
				}
				return printJSON(s.out, proto.Message(resp))
			}
			info := resp.GetInfo()
			tok := resp.GetToken()
			if out != "" {
				tok = "(in " + out + ")"
			}
			return printFields(s.out, []field{
				{"Token", tok},
				{"ID", info.GetId()},
				{"Owner", info.GetOwner()},
				{"Renewer", info.GetRenewer()},
				{"Expires", timeMs(info.GetExpiresUnixMs())},
				{"Max date", timeMs(info.GetMaxUnixMs())},
			})
		}),
	}
	get.Flags().StringVar(&renewer, "renewer", "", "who may renew it (default: yourself)")
	get.Flags().StringVar(&out, "out", "", "write the token to FILE instead of printing it")
	get.Flags().StringVar(&format, "format", "strato", "with --out: strato (the token) or hadoop (a Hadoop token storage file)")
	get.Flags().StringVar(&service, "service", "", "with --format hadoop: the token's service (default strato:<meta addresses>)")
	renew := &cobra.Command{
		Use:   "renew TOKEN|FILE",
		Short: "Renew a delegation token (its renewer only): it expires a renew interval from now, at most at its max date",
		Args:  exactArgs(1),
		RunE: o.action(func(s *session, args []string) error {
			tok, err := delegationArg(args[0])
			if err != nil {
				return err
			}
			exp, err := s.c.RenewDelegationToken(s.ctx, tok)
			if err != nil {
				return err
			}
			if s.json {
				return printJSON(s.out, proto.Message(&stratov1.RenewDelegationTokenResponse{ExpiresUnixMs: exp}))
			}
			_, err = fmt.Fprintf(s.out, "renewed: expires %s\n", timeMs(exp))
			return err
		}),
	}
	cancel := &cobra.Command{
		Use:   "cancel TOKEN|FILE",
		Short: "Cancel a delegation token (its owner or renewer): every meta replica refuses it once applied",
		Args:  exactArgs(1),
		RunE: o.action(func(s *session, args []string) error {
			tok, err := delegationArg(args[0])
			if err != nil {
				return err
			}
			if err := s.c.CancelDelegationToken(s.ctx, tok); err != nil {
				return err
			}
			id, _, _ := meta.ParseToken(tok)
			if s.json {
				return printJSON(s.out, proto.Message(&stratov1.DelegationToken{Id: id}))
			}
			_, err = fmt.Fprintf(s.out, "%s: cancelled\n", id)
			return err
		}),
	}
	list := &cobra.Command{
		Use:   "list",
		Short: "List the delegation tokens (administrators; never their secrets)",
		Args:  exactArgs(0),
		RunE: o.action(func(s *session, _ []string) error {
			toks, err := s.c.ListDelegationTokens(s.ctx)
			if err != nil {
				return err
			}
			if s.json {
				return printJSON(s.out, messages(toks))
			}
			rows := make([][]string, 0, len(toks))
			for _, t := range toks {
				state := "valid"
				switch {
				case t.GetCancelledUnixMs() != 0:
					state = "cancelled " + timeMs(t.GetCancelledUnixMs())
				case time.Now().UnixMilli() >= t.GetExpiresUnixMs():
					state = "expired"
				}
				rows = append(rows, []string{t.GetId(), t.GetOwner(), t.GetRenewer(), orDash(t.GetRealUser()), timeMs(t.GetIssueUnixMs()),
					timeMs(t.GetExpiresUnixMs()), timeMs(t.GetMaxUnixMs()), state})
			}
			return printTable(s.out, []string{"ID", "OWNER", "RENEWER", "REAL USER", "ISSUED", "EXPIRES", "MAX DATE", "STATE"}, rows)
		}),
	}
	cmd.AddCommand(get, renew, cancel, list)
	return cmd
}

// delegationArg is the token an argument gives: the token itself
// (strato1.dt<N>.<secret>) or a file holding it (get --out).
func delegationArg(arg string) (string, error) {
	if strings.HasPrefix(arg, meta.TokenPrefix+".") {
		return arg, nil
	}
	b, err := os.ReadFile(arg)
	if err != nil {
		return "", usagef("%s is neither a token (%s.<id>.<secret>) nor a file holding one: %v", arg, meta.TokenPrefix, err)
	}
	tok := strings.TrimSpace(string(b))
	if _, _, err := meta.ParseToken(tok); err != nil {
		return "", usagef("%s: %v (a Hadoop token file is read by hadoop dtutil, not here)", arg, err)
	}
	return tok, nil
}

// hadoopTokenStorage is a Hadoop token storage file holding one token of
// kind meta.DelegationTokenKind under alias: Credentials'
// writeTokenStorageStream in its WRITABLE format ("HDTS", version 0, the
// token count, each alias and Token.write, then no secret keys), which
// every Hadoop 3 reads.
func hadoopTokenStorage(alias, service string, identifier, password []byte) []byte {
	b := []byte("HDTS\x00")
	b = appendVInt(b, 1)
	b = appendText(b, []byte(alias))
	b = appendText(b, identifier)
	b = appendText(b, password)
	b = appendText(b, []byte(meta.DelegationTokenKind))
	b = appendText(b, []byte(service))
	return appendVInt(b, 0)
}

func appendText(b, t []byte) []byte { return append(appendVInt(b, len(t)), t...) }

// appendVInt is Hadoop's WritableUtils.writeVInt for the small
// non-negative numbers a token file holds.
func appendVInt(b []byte, n int) []byte {
	if n <= 127 {
		return append(b, byte(n))
	}
	var buf [8]byte
	binary.BigEndian.PutUint64(buf[:], uint64(n))
	i := 0
	for i < 7 && buf[i] == 0 {
		i++
	}
	return append(append(b, byte(-112-(8-i))), buf[i:]...)
}
