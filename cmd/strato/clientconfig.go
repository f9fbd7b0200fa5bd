package main

// The client's own file of named clusters (client.Config, in
// $XDG_CONFIG_HOME/strato/config.toml, else ~/.config/strato/config.toml):
// --cluster NAME (or $STRATO_CLUSTER) picks one, else the file's default
// is used. A cluster's settings serve where --meta, --tls-ca and --token
// are not given: a cluster named by --cluster or $STRATO_CLUSTER beats
// $STRATO_META, $STRATO_TLS_CA and $STRATO_TOKEN, the default cluster does
// not.

import (
	"errors"
	"os"

	"github.com/spf13/cobra"

	"github.com/strato-io/strato/client"
)

// clusterEnv names the environment variable that picks a cluster of the
// client's file when --cluster is not given.
const clusterEnv = "STRATO_CLUSTER"

// chosenCluster is the cluster a command works on (zero: none), and
// whether it was named by --cluster or $STRATO_CLUSTER rather than by the
// file's default.
type chosenCluster struct {
	client.ClusterConfig
	name  string
	named bool
}

// cluster returns the cluster the command works on: --cluster, else
// $STRATO_CLUSTER, else the default of the client's file; none when none
// names one.
func (o *cliOptions) cluster() (chosenCluster, error) {
	name := o.clusterName
	if name == "" {
		name = os.Getenv(clusterEnv)
	}
	path, err := client.ConfigFile()
	if err != nil {
		if name != "" {
			return chosenCluster{}, err
		}
		return chosenCluster{}, nil
	}
	c, err := client.ReadConfig(path)
	if err != nil {
		return chosenCluster{}, usagef("%v", err)
	}
	cl, ok, err := c.Lookup(name)
	switch {
	case errors.Is(err, client.ErrNoCluster):
		return chosenCluster{}, usagef("--cluster %s: %v in %s", name, err, path)
	case err != nil || !ok:
		return chosenCluster{}, err
	}
	chosen := chosenCluster{ClusterConfig: cl, name: name, named: name != ""}
	if !chosen.named {
		chosen.name = c.Default
	}
	return chosen, nil
}

// setting returns a client setting: the flag when it was given, else the
// cluster's when the cluster was named, else $env, else the cluster's
// (the default cluster's), else the flag's default.
func (cl chosenCluster) setting(cmd *cobra.Command, flag, env, fromCluster string) string {
	f := cmd.Flag(flag)
	switch {
	case f != nil && f.Changed:
		return f.Value.String()
	case cl.named && fromCluster != "":
		return fromCluster
	case os.Getenv(env) != "":
		return os.Getenv(env)
	case fromCluster != "":
		return fromCluster
	case f != nil:
		return f.Value.String()
	}
	return ""
}

// token returns the token the client presents: --token (- reads it from
// standard input), else the cluster's token-file as setting orders it
// against $STRATO_TOKEN, else what client.FindToken finds ($STRATO_TOKEN,
// the token strato login stored).
func (cl chosenCluster) token(cmd *cobra.Command, tokenFlag string) (string, error) {
	if f := cmd.Flag("token"); f != nil && f.Changed {
		tok, err := readTokenArg(tokenFlag, cmd.InOrStdin())
		if err != nil {
			return "", err
		}
		return client.FindToken(tok)
	}
	if cl.TokenFile != "" && (cl.named || os.Getenv(client.TokenEnv) == "") {
		tok, err := cl.Token()
		if err != nil {
			return "", usagef("cluster %s: %v", cl.name, err)
		}
		return tok, nil
	}
	return client.FindToken("")
}
