package client

// The client's own file names the clusters a user works with (the CLI's
// --cluster, docs/operations.md "Configuration"):
//
//	default = "prod"
//
//	[clusters.prod]
//	meta = ["meta1:9860", "meta2:9860", "meta3:9860"]
//	tls-ca = "/etc/strato/ca.crt"
//	token-file = "prod.token"     # relative: beside config.toml
//
// ClusterOptions turns one into the Options of New.

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/pelletier/go-toml/v2"

	"github.com/strato-io/strato/certs"
)

// ErrNoCluster is returned for a cluster name the client's file does not
// have.
var ErrNoCluster = errors.New("client: unknown cluster")

// Config is the client's file: its clusters by name, and the one used
// when none is named.
type Config struct {
	Default  string                   `toml:"default"`
	Clusters map[string]ClusterConfig `toml:"clusters"`
}

// ClusterConfig is one cluster of the file, its table [clusters.NAME].
type ClusterConfig struct {
	Meta      []string `toml:"meta"`       // meta's addresses, host:port
	TLSCA     string   `toml:"tls-ca"`     // the cluster CA's certificate ("": plaintext)
	TokenFile string   `toml:"token-file"` // a file holding the token to present
}

// ConfigFile is the path of the client's file: config.toml beside
// TokenFile, $XDG_CONFIG_HOME/strato/config.toml or
// ~/.config/strato/config.toml.
func ConfigFile() (string, error) {
	tok, err := TokenFile()
	if err != nil {
		return "", err
	}
	return filepath.Join(filepath.Dir(tok), "config.toml"), nil
}

// ReadConfig reads the client's file at path; a file that does not exist
// is an empty Config. It is read strictly: an unknown key or a value of
// the wrong type is an error naming the file and line. Relative paths in
// it are taken as relative to its directory.
func ReadConfig(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return &Config{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("client: %w", err)
	}
	var c Config
	if err := toml.NewDecoder(bytes.NewReader(data)).DisallowUnknownFields().Decode(&c); err != nil {
		return nil, configError(path, err)
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
		return nil, fmt.Errorf("client: %s: default = %q, and there is no [clusters.%s]", path, c.Default, c.Default)
	}
	return &c, nil
}

// configError words an error of go-toml about the file at path: its
// first unknown key, or the error, at its line.
func configError(path string, err error) error {
	var sm *toml.StrictMissingError
	if errors.As(err, &sm) && len(sm.Errors) > 0 {
		line, _ := sm.Errors[0].Position()
		return fmt.Errorf("client: %s:%d: unknown key %s", path, line, strings.Join(sm.Errors[0].Key(), "."))
	}
	var de *toml.DecodeError
	if errors.As(err, &de) {
		line, _ := de.Position()
		return fmt.Errorf("client: %s:%d: %s", path, line, strings.TrimPrefix(de.Error(), "toml: "))
	}
	return fmt.Errorf("client: %s: %w", path, err)
}

// Lookup returns the cluster name of the file, or with name "" its
// default; ok is false when name is "" and there is no default.
func (c *Config) Lookup(name string) (cl ClusterConfig, ok bool, err error) {
	if name == "" {
		if name = c.Default; name == "" {
			return ClusterConfig{}, false, nil
		}
	}
	cl, ok = c.Clusters[name]
	if !ok {
		var names []string
		for n := range c.Clusters {
			names = append(names, n)
		}
		slices.Sort(names)
		return ClusterConfig{}, false, fmt.Errorf("%w %q (the file names: %s)", ErrNoCluster, name, strings.Join(names, ", "))
	}
	return cl, true, nil
}

// Token returns the content of the cluster's token file, trimmed ("" when
// it has none).
func (cl ClusterConfig) Token() (string, error) {
	if cl.TokenFile == "" {
		return "", nil
	}
	b, err := os.ReadFile(cl.TokenFile)
	if err != nil {
		return "", fmt.Errorf("client: token-file: %w", err)
	}
	return strings.TrimSpace(string(b)), nil
}

// Options returns the Options of a client of the cluster: its meta
// addresses, TLS trusting its CA, and the token of its token file, else
// what FindToken finds.
func (cl ClusterConfig) Options() (Options, error) {
	o := Options{Meta: slices.Clone(cl.Meta)}
	if cl.TLSCA != "" {
		cfg, err := certs.ClientConfig(cl.TLSCA, "", "")
		if err != nil {
			return Options{}, fmt.Errorf("client: tls-ca: %w", err)
		}
		o.TLS = cfg
	}
	tok, err := cl.Token()
	if err == nil && tok == "" {
		tok, err = FindToken("")
	}
	if err != nil {
		return Options{}, err
	}
	o.Token = tok
	return o, nil
}

// ClusterOptions returns the Options of a client of the cluster name of
// the client's file (ConfigFile), or with name "" of its default, to
// which the caller adds what else it needs (Logger, Owner, ...):
//
//	o, err := client.ClusterOptions("prod")
//	...
//	c, err := client.New(o)
func ClusterOptions(name string) (Options, error) {
	path, err := ConfigFile()
	if err != nil {
		return Options{}, err
	}
	c, err := ReadConfig(path)
	if err != nil {
		return Options{}, err
	}
	cl, ok, err := c.Lookup(name)
	if err != nil {
		return Options{}, err
	}
	if !ok {
		return Options{}, fmt.Errorf("%w: %s names no default", ErrNoCluster, path)
	}
	return cl.Options()
}
