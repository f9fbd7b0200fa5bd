package main

import (
	"strings"

	"github.com/spf13/cobra"
)

// uriScheme starts a path argument written as the Hadoop connector writes
// it: strato://NAME/vol/bucket/key, NAME a cluster of the client's file
// (as --cluster NAME), or strato://HOST:PORT[,HOST:PORT]/vol/... (meta's
// addresses, as --meta), or strato:///vol/... (the cluster the flags,
// environment and file choose). Paths copied from a job's configuration
// or logs then work as they are.
const uriScheme = "strato://"

// resolveURIs turns the URI arguments of a command into paths, in place,
// and makes the cluster they name the command's. Every URI must name the
// same cluster, and one that --cluster or --meta names already.
func (o *cliOptions) resolveURIs(cmd *cobra.Command, args []string) error {
	var auth, first string
	for i, a := range args {
		rest, ok := strings.CutPrefix(a, uriScheme)
		if !ok {
			continue
		}
		host, path, _ := strings.Cut(rest, "/")
		if first != "" && host != auth {
			return usagef("%s and %s name different clusters: a command works on one", first, a)
		}
		if first == "" {
			auth, first = host, a
		}
		args[i] = "/" + path
	}
	if auth == "" {
		return nil
	}
	if strings.ContainsAny(auth, ":,") {
		f := cmd.Flag("meta")
		if f.Changed && f.Value.String() != auth {
			return usagef("%s names meta %s, --meta %s", first, auth, f.Value.String())
		}
		if err := f.Value.Set(auth); err != nil {
			return err
		}
		f.Changed = true
		return nil
	}
	if o.clusterName != "" && o.clusterName != auth {
		return usagef("%s names cluster %s, --cluster %s", first, auth, o.clusterName)
	}
	o.clusterName = auth
	return nil
}
