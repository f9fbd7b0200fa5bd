package main

// The client's own file, config.toml beside the token strato login stores
// ($XDG_CONFIG_HOME/strato, else ~/.config/strato), names the clusters a
// user works with:
//
//	default = "prod"
//
//	[clusters.prod]
//	meta = ["meta1:9860", "meta2:9860", "meta3:9860"]
//	tls-ca = "/etc/strato/ca.crt"
//	token-file = "prod.token"     # relative: beside config.toml
//
// --cluster NAME (or $STRATO_CLUSTER) picks one; else the default is used.
// A cluster's settings serve where --meta, --tls-ca and --token are not
// given: a cluster named by --cluster or $STRATO_CLUSTER beats
// $STRATO_META, $STRATO_TLS_CA and $STRATO_TOKEN, the default cluster does
// not.

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/pelletier/go-toml/v2"
	"github.com/spf13/cobra"

	"github.com/strato-io/strato/client"
)

// clusterEnv names the environment variable that picks a cluster of the
// client's file when --cluster is not given.
const clusterEnv = "STRATO_CLUSTER"

// clientConfig is the client's file.
type clientConfig struct {
	Default  string                     `toml:"default"`
	Clusters map[string]clusterSettings `toml:"clusters"`
}

// clusterSettings are one cluster's table, [clusters.NAME].
type clusterSettings struct {
	Meta      []string `toml:"meta"`       // meta addresses, host:port
	TLSCA     string   `toml:"tls-ca"`     // the cluster CA's certificate
	TokenFile string   `toml:"token-file"` // a file holding the token to present
}

// chosenCluster is the cluster a command works on (zero: none), and
// whether it was named by --cluster or $STRATO_CLUSTER rather than by the
// file's default.
type chosenCluster struct {
	clusterSettings
	name  string
	named bool
}

// clientConfigPath is the path of the client's file: config.toml in the
// directory of the token file strato login writes.
func clientConfigPath() (string, error) {
	tok, err := client.TokenFile()
	if err != nil {
		return "", err
	}
	return filepath.Join(filepath.Dir(tok), "config.toml"), nil
}

// readClientConfig reads the client's file at path (none: no clusters),
// strictly: an unknown key or a value of the wrong type is an error naming
// the line. Relative paths in it are relative to its directory.
func readClientConfig(path string) (*clientConfig, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return &clientConfig{}, nil
	}
	if err != nil {
		return nil, err
	}
	var c clientConfig
	if err := toml.NewDecoder(bytes.NewReader(data)).DisallowUnknownFields().Decode(&c); err != nil {
		return nil, tomlError(path, err)
	}
	dir := filepath.Dir(path)
	beside := func(p string) string {
		if p == "" || filepath.IsAbs(p) {
			return p
		}
		return filepath.Join(dir, p)
	}
	for name, cl := range c.Clusters {
		cl.TLSCA, cl.TokenFile = beside(cl.TLSCA), beside(cl.TokenFile)
		c.Clusters[name] = cl
	}
	if _, ok := c.Clusters[c.Default]; c.Default != "" && !ok {
		return nil, usagef("%s: default = %q, and there is no [clusters.%s]", path, c.Default, c.Default)
	}
	return &c, nil
}

// tomlError words an error of go-toml about the file at path: its first
// unknown key, or the error, at its line.
func tomlError(path string, err error) error {
	var sm *toml.StrictMissingError
	if errors.As(err, &sm) && len(sm.Errors) > 0 {
		line, _ := sm.Errors[0].Position()
		return usagef("%s:%d: unknown key %s", path, line, strings.Join(sm.Errors[0].Key(), "."))
	}
	var de *toml.DecodeError
	if errors.As(err, &de) {
		line, _ := de.Position()
		return usagef("%s:%d: %s", path, line, strings.TrimPrefix(de.Error(), "toml: "))
	}
	return usagef("%s: %v", path, err)
}

// cluster returns the cluster the command works on: --cluster, else
// $STRATO_CLUSTER, else the default of the client's file; none when none
// names one.
func (o *cliOptions) cluster() (chosenCluster, error) {
	name := o.clusterName
	if name == "" {
		name = os.Getenv(clusterEnv)
	}
	path, err := clientConfigPath()
	if err != nil {
		if name != "" {
			return chosenCluster{}, err
		}
		return chosenCluster{}, nil
	}
	c, err := readClientConfig(path)
	if err != nil {
		return chosenCluster{}, err
	}
	chosen := chosenCluster{name: name, named: name != ""}
	if !chosen.named {
		chosen.name = c.Default
	}
	if chosen.name == "" {
		return chosen, nil
	}
	cl, ok := c.Clusters[chosen.name]
	if !ok {
		var names []string
		for n := range c.Clusters {
			names = append(names, n)
		}
		slices.Sort(names)
		return chosenCluster{}, usagef("--cluster %s: %s has no [clusters.%s] (it names: %s)", chosen.name, path, chosen.name, strings.Join(names, ", "))
	}
	chosen.clusterSettings = cl
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
// in), else the cluster's token-file as setting orders it against
// $STRATO_TOKEN, else what client.FindToken finds ($STRATO_TOKEN, the
// token strato login stored).
func (cl chosenCluster) token(cmd *cobra.Command, tokenFlag string) (string, error) {
	if f := cmd.Flag("token"); f != nil && f.Changed {
		tok, err := readTokenArg(tokenFlag, cmd.InOrStdin())
		if err != nil {
			return "", err
		}
		return client.FindToken(tok)
	}
	if cl.TokenFile != "" && (cl.named || os.Getenv(client.TokenEnv) == "") {
		b, err := os.ReadFile(cl.TokenFile)
		if err != nil {
			return "", usagef("cluster %s: token-file: %v", cl.name, err)
		}
		return strings.TrimSpace(string(b)), nil
	}
	return client.FindToken("")
}
