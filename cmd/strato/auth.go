package main

// Users and tokens on the command line (docs/security.md): `strato admin
// user`, `strato admin token`, and `strato login`, `logout` and `whoami`.
// Every command that talks to meta presents --token, else $STRATO_TOKEN,
// else the token `strato login` stored (client.FindToken).

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"google.golang.org/protobuf/proto"

	"github.com/strato-io/strato/client"
	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

func init() {
	extraCommands = append(extraCommands, newLoginCmd, newLogoutCmd, newWhoAmICmd)
}

// readTokenArg resolves --token: "-" reads the first line of in.
func readTokenArg(tok string, in io.Reader) (string, error) {
	if tok != "-" {
		return tok, nil
	}
	line, err := bufio.NewReader(in).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return "", fmt.Errorf("reading the token from standard input: %w", err)
	}
	if line = strings.TrimSpace(line); line == "" {
		return "", usagef("--token -: no token on standard input")
	}
	return line, nil
}

// leafCommand gives a command that is not under a group the shared flags.
func leafCommand(cmd *cobra.Command, o *cliOptions) *cobra.Command {
	o.addFlags(cmd)
	cmd.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return usagef("%s: %s (see %s --help)", describeCommand(c, nil), err.Error(), c.CommandPath())
	})
	return cmd
}

func newLoginCmd() *cobra.Command {
	o := &cliOptions{}
	cmd := &cobra.Command{
		Use:   "login --token TOKEN|-",
		Short: "Check a token with meta and store it for the commands that follow",
		Long: `login asks meta who --token names (WhoAmI) and stores it in
$XDG_CONFIG_HOME/strato/token (or ~/.config/strato/token), mode 0600: every
command then presents it, unless --token or $STRATO_TOKEN gives another.
--token - reads the token from standard input (keeps it out of the shell's
history). Tokens come from strato admin token issue, or, for the first
administrator, from meta's data directory (admin.token).`,
		Args: exactArgs(0),
		RunE: o.action(func(s *session, _ []string) error {
			if o.token == "" {
				return usagef("login: --token is required (a token from strato admin token issue, or - to read it from standard input)")
			}
			who, err := s.c.WhoAmI(s.ctx)
			if err != nil {
				return err
			}
			if !who.GetAuthenticated() {
				return errors.New("meta does not authenticate clients (it runs with --auth none): there is nothing to log in to")
			}
			path, err := client.TokenFile()
			if err != nil {
				return err
			}
			if err := storeToken(path, s.token); err != nil {
				return err
			}
			if s.json {
				return printJSON(s.out, who)
			}
			_, err = fmt.Fprintf(s.out, "logged in as %s%s (token %s, expires %s); token stored in %s\n",
				who.GetUser(), adminSuffix(who.GetAdmin()), who.GetTokenId(), timeMs(who.GetTokenExpiresUnixMs()), path)
			return err
		}),
	}
	return leafCommand(cmd, o)
}

func adminSuffix(admin bool) string {
	if admin {
		return ", an administrator"
	}
	return ""
}

// storeToken writes the token file (its directory 0700, the file 0600).
func storeToken(path, tok string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(tok+"\n"), 0o600); err != nil {
		return err
	}
	if err := os.Chmod(tmp, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

func newLogoutCmd() *cobra.Command {
	// The shared flags are accepted (and unused), as by every command.
	return leafCommand(&cobra.Command{
		Use:   "logout",
		Short: "Forget the token strato login stored (it stays valid: strato admin token revoke ID ends it)",
		Args:  exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			path, err := client.TokenFile()
			if err != nil {
				return failure("logout", err)
			}
			switch err := os.Remove(path); {
			case errors.Is(err, os.ErrNotExist):
				_, err = fmt.Fprintln(cmd.OutOrStdout(), "not logged in")
				return err
			case err != nil:
				return failure("logout", err)
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "logged out (removed %s)\n", path)
			return err
		},
	}, &cliOptions{})
}

func newWhoAmICmd() *cobra.Command {
	o := &cliOptions{}
	cmd := &cobra.Command{
		Use:   "whoami",
		Short: "Show who meta takes this command line for: user, administrator, groups, token",
		Args:  exactArgs(0),
		RunE: o.action(func(s *session, _ []string) error {
			who, err := s.c.WhoAmI(s.ctx)
			if err != nil {
				return err
			}
			if s.json {
				return printJSON(s.out, who)
			}
			if !who.GetAuthenticated() {
				_, err := fmt.Fprintln(s.out, "meta does not authenticate clients (--auth none): every caller may do everything")
				return err
			}
			return printFields(s.out, []field{
				{"User", who.GetUser()},
				{"Admin", fmt.Sprint(who.GetAdmin())},
				{"Groups", orDash(strings.Join(who.GetGroups(), ","))},
				{"Token", who.GetTokenId()},
				{"Expires", timeMs(who.GetTokenExpiresUnixMs())},
			})
		}),
	}
	return leafCommand(cmd, o)
}

// ---- strato admin user, strato admin token -------------------------------------

func newUserAdminCmd(o *cliOptions) *cobra.Command {
	cmd := group("user", "Create, list and delete the users of the cluster (meta's --auth token)")
	var isAdmin, proxy bool
	var groups []string
	create := &cobra.Command{
		Use:   "create NAME [--admin] [--proxy] [--group G]...",
		Short: "Create a user (1 to 64 of [a-z0-9._-]); give it a token with strato admin token issue --user NAME",
		Args:  exactArgs(1),
		RunE: o.action(func(s *session, args []string) error {
			u, err := s.c.CreateUserWith(s.ctx, &stratov1.CreateUserRequest{Name: args[0], Admin: isAdmin, Groups: groups, Proxy: proxy})
			if err != nil {
				return err
			}
			if s.json {
				return printJSON(s.out, u)
			}
			_, err = fmt.Fprintf(s.out, "%s: created%s\n", u.GetName(), adminSuffix(u.GetAdmin()))
			return err
		}),
	}
	create.Flags().BoolVar(&isAdmin, "admin", false, "an administrator: may call every RPC")
	create.Flags().BoolVar(&proxy, "proxy", false, "may act on behalf of other users who are not administrators (an S3 gateway's user)")
	create.Flags().StringArrayVar(&groups, "group", nil, "a group the user belongs to (repeat for more)")
	del := &cobra.Command{
		Use:   "delete NAME",
		Short: "Delete a user and revoke its tokens",
		Args:  exactArgs(1),
		RunE: o.action(func(s *session, args []string) error {
			n, err := s.c.DeleteUser(s.ctx, args[0])
			if err != nil {
				return err
			}
			if s.json {
				return printJSON(s.out, proto.Message(&stratov1.DeleteUserResponse{RevokedTokens: uint32(n)}))
			}
			_, err = fmt.Fprintf(s.out, "%s: deleted; %d token(s) revoked\n", args[0], n)
			return err
		}),
	}
	list := &cobra.Command{
		Use:   "list",
		Short: "List the users",
		Args:  exactArgs(0),
		RunE: o.action(func(s *session, _ []string) error {
			users, err := s.c.ListUsers(s.ctx)
			if err != nil {
				return err
			}
			if s.json {
				return printJSON(s.out, messages(users))
			}
			rows := make([][]string, 0, len(users))
			for _, u := range users {
				rows = append(rows, []string{u.GetName(), fmt.Sprint(u.GetAdmin()), orDash(strings.Join(u.GetGroups(), ",")), timeMs(u.GetCreatedUnixMs())})
			}
			return printTable(s.out, []string{"NAME", "ADMIN", "GROUPS", "CREATED"}, rows)
		}),
	}
	cmd.AddCommand(create, del, list)
	return cmd
}

func newTokenAdminCmd(o *cliOptions) *cobra.Command {
	cmd := group("token", "Issue, list and revoke tokens (meta's --auth token)")
	var user string
	var expires time.Duration
	issue := &cobra.Command{
		Use:   "issue [--user NAME] [--expires 720h]",
		Short: "Issue a token (printed once: meta keeps only its hash)",
		Long: `issue makes a token for --user (default: yourself; another user's needs
an administrator) that expires after --expires (default 720h, 30 days; at
most 8784h, 366 days) and prints it: this is the only time it is shown.
Give it to strato login, $STRATO_TOKEN, or --token.`,
		Args: exactArgs(0),
		RunE: o.action(func(s *session, _ []string) error {
			tok, info, err := s.c.IssueToken(s.ctx, user, expires)
			if err != nil {
				return err
			}
			if s.json {
				return printJSON(s.out, proto.Message(&stratov1.IssueTokenResponse{Info: info, Token: tok}))
			}
			return printFields(s.out, []field{
				{"Token", tok},
				{"ID", info.GetId()},
				{"User", info.GetUser()},
				{"Expires", timeMs(info.GetExpiresUnixMs())},
			})
		}),
	}
	issue.Flags().StringVar(&user, "user", "", "whose token (default: the caller)")
	issue.Flags().DurationVar(&expires, "expires", 0, "lifetime (default 720h; at most 8784h)")
	revoke := &cobra.Command{
		Use:   "revoke ID",
		Short: "Revoke a token: each meta replica refuses it once it has applied the revocation",
		Args:  exactArgs(1),
		RunE: o.action(func(s *session, args []string) error {
			if err := s.c.RevokeToken(s.ctx, args[0]); err != nil {
				return err
			}
			if s.json {
				return printJSON(s.out, proto.Message(&stratov1.Token{Id: args[0]}))
			}
			_, err := fmt.Fprintf(s.out, "%s: revoked\n", args[0])
			return err
		}),
	}
	var listUser string
	list := &cobra.Command{
		Use:   "list [--user NAME]",
		Short: "List tokens (never their secrets): all of them for an administrator, your own otherwise",
		Args:  exactArgs(0),
		RunE: o.action(func(s *session, _ []string) error {
			toks, err := s.c.ListTokens(s.ctx, listUser)
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
				case t.GetRevokedUnixMs() != 0:
					state = "revoked " + timeMs(t.GetRevokedUnixMs())
				case time.Now().UnixMilli() >= t.GetExpiresUnixMs():
					state = "expired"
				}
				rows = append(rows, []string{t.GetId(), t.GetUser(), timeMs(t.GetCreatedUnixMs()), timeMs(t.GetExpiresUnixMs()), state})
			}
			return printTable(s.out, []string{"ID", "USER", "CREATED", "EXPIRES", "STATE"}, rows)
		}),
	}
	list.Flags().StringVar(&listUser, "user", "", "only this user's tokens")
	cmd.AddCommand(issue, revoke, list, newDelegationTokenCmd(o))
	return cmd
}
