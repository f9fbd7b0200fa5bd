package main

// TLS on the command line: the --tls-cert/--tls-key/--tls-ca flags of the
// servers (meta, datanode), the CLI's --tls-ca, and `strato admin ca`,
// which makes the cluster's CA and certificates offline (docs/security.md).

import (
	"crypto/tls"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/strato-io/strato/certs"
	"github.com/strato-io/strato/telemetry"
)

// tlsCAEnv names the environment variable that replaces --tls-ca's
// default (none).
const tlsCAEnv = "STRATO_TLS_CA"

// tlsFlags are a server's TLS flags.
type tlsFlags struct{ cert, key, ca string }

func (t *tlsFlags) addFlags(f *pflag.FlagSet, what string) {
	f.StringVar(&t.cert, "tls-cert", "", "certificate (PEM) this "+what+" presents, signed by the cluster CA (strato admin ca issue); with --tls-key and --tls-ca turns TLS on")
	f.StringVar(&t.key, "tls-key", "", "private key (PEM) of --tls-cert")
	f.StringVar(&t.ca, "tls-ca", "", "the cluster CA's certificate (ca.crt): peers' certificates must be signed by it")
}

// configs returns the server's TLS configuration and that of its
// connections to other nodes (presenting the same certificate); nil, nil
// when no flag is set.
func (t *tlsFlags) configs() (server, client *tls.Config, err error) {
	switch {
	case t.cert == "" && t.key == "" && t.ca == "":
		return nil, nil, nil
	case t.cert == "" || t.key == "" || t.ca == "":
		return nil, nil, usagef("--tls-cert, --tls-key and --tls-ca go together")
	}
	if server, err = certs.ServerConfig(t.cert, t.key, t.ca); err != nil {
		return nil, nil, err
	}
	if client, err = certs.ClientConfig(t.ca, t.cert, t.key); err != nil {
		return nil, nil, err
	}
	return server, client, nil
}

// registerCertFile registers with reg the expiry of the certificate in
// certFile (a server serving HTTPS with certFile and keyFile); nothing
// when either is "".
func registerCertFile(reg *telemetry.Registry, certFile, keyFile string) error {
	if certFile == "" || keyFile == "" {
		return nil
	}
	pair, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return fmt.Errorf("--tls-cert: %w", err)
	}
	return telemetry.RegisterCertificates(reg, &tls.Config{Certificates: []tls.Certificate{pair}})
}

// clusterTLS returns the TLS configuration of a client of the cluster:
// trusting the CA in ca (cmd's --tls-ca), else in $STRATO_TLS_CA; nil
// (plaintext) when neither is set.
func clusterTLS(cmd *cobra.Command, ca string) (*tls.Config, error) {
	if f := cmd.Flag("tls-ca"); (f == nil || !f.Changed) && os.Getenv(tlsCAEnv) != "" {
		ca = os.Getenv(tlsCAEnv)
	}
	return caTLS(ca)
}

// caTLS returns the TLS configuration of a client trusting the CA whose
// certificate is in the file ca; nil (plaintext) when ca is "".
func caTLS(ca string) (*tls.Config, error) {
	if ca == "" {
		return nil, nil
	}
	cfg, err := certs.ClientConfig(ca, "", "")
	if err != nil {
		return nil, fmt.Errorf("--tls-ca: %w", err)
	}
	return cfg, nil
}

// ---- strato admin ca -----------------------------------------------------------

// newCACmd is `strato admin ca`: it works on files only, without meta.
func newCACmd() *cobra.Command {
	cmd := group("ca", "Make the cluster's TLS certificate authority and certificates (offline, no meta needed)")
	var dir string
	initCmd := &cobra.Command{
		Use:   "init --dir DIR",
		Short: "Create the cluster CA in DIR (ca.crt, ca.key); refuses to replace an existing one",
		Args:  exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := certs.InitCA(dir); err != nil {
				return failure("ca init", err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "created the cluster CA: %s (give it to clients: --tls-ca), %s (keep it secret)\n",
				filepath.Join(dir, certs.CACert), filepath.Join(dir, certs.CAKey))
			return nil
		},
	}
	initCmd.Flags().StringVar(&dir, "dir", "", "directory of the CA (created with mode 0700)")
	_ = initCmd.MarkFlagRequired("dir")

	var (
		name, out string
		hosts     []string
	)
	issue := &cobra.Command{
		Use:   "issue --dir DIR --name NAME [--host H]... [--out DIR]",
		Short: "Issue NAME.crt and NAME.key, signed by the CA in --dir, for a node (server and client auth) at the --host names and addresses",
		Args:  exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if out == "" {
				out = dir
			}
			if err := certs.Issue(dir, out, name, hosts); err != nil {
				return failure("ca issue", err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "issued %s and %s (valid for 127.0.0.1, localhost", filepath.Join(out, name+".crt"), filepath.Join(out, name+".key"))
			for _, h := range hosts {
				fmt.Fprintf(cmd.OutOrStdout(), ", %s", h)
			}
			fmt.Fprintln(cmd.OutOrStdout(), ")")
			return nil
		},
	}
	f := issue.Flags()
	f.StringVar(&dir, "dir", "", "directory of the CA")
	f.StringVar(&name, "name", "", "name of the certificate: its files are NAME.crt and NAME.key")
	f.StringArrayVar(&hosts, "host", nil, "a DNS name or IP address the node is reached at (repeat; 127.0.0.1 and localhost are always included)")
	f.StringVar(&out, "out", "", "directory the files are written to (default: --dir)")
	_ = issue.MarkFlagRequired("dir")
	_ = issue.MarkFlagRequired("name")
	cmd.AddCommand(initCmd, issue)
	return cmd
}
