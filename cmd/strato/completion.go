package main

// Shell completion of volumes, buckets and paths from meta (cobra's
// `strato completion bash|zsh|fish|powershell` prints the scripts): the
// path arguments of strato fs and strato sh complete /VOLUME/,
// /VOLUME/BUCKET/ and the entries of a directory, each listed from meta
// within a second or two; nothing when meta does not answer.

import (
	"context"
	"strings"
	"time"

	"github.com/spf13/cobra"
)

// completionTimeout bounds what one completion asks meta.
const completionTimeout = 2 * time.Second

// addPathCompletion gives every command under root that takes arguments
// and completes none of its own the completion of paths.
func (o *cliOptions) addPathCompletion(root *cobra.Command) {
	for _, c := range root.Commands() {
		if c.HasSubCommands() {
			o.addPathCompletion(c)
			continue
		}
		if c.ValidArgsFunction == nil && c.RunE != nil {
			c.ValidArgsFunction = o.completePath
		}
	}
}

// completePath lists what can follow toComplete: volumes, buckets of a
// volume, or the entries of a directory, directories with a "/".
func (o *cliOptions) completePath(cmd *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	if toComplete != "" && !strings.HasPrefix(toComplete, "/") {
		return nil, cobra.ShellCompDirectiveDefault // a local file
	}
	c, _, _, _, err := o.connect(cmd)
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	defer func() { _ = c.Close() }()
	ctx, cancel := context.WithTimeout(context.Background(), completionTimeout)
	defer cancel()
	dir, base := "/", strings.TrimPrefix(toComplete, "/")
	if i := strings.LastIndexByte(toComplete, '/'); i > 0 {
		dir, base = toComplete[:i], toComplete[i+1:]
	}
	var out []string
	switch strings.Count(dir, "/") {
	case 1:
		if dir == "/" { // volumes
			vols, err := c.ListVolumes(ctx, base)
			if err != nil {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			for _, v := range vols {
				out = append(out, "/"+v.GetName()+"/")
			}
			break
		}
		bks, err := c.ListBuckets(ctx, strings.TrimPrefix(dir, "/"), base) // buckets of a volume
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		for _, b := range bks {
			out = append(out, dir+"/"+b.GetName()+"/")
		}
	default: // the entries of a directory
		sts, err := c.List(ctx, dir)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		for _, st := range sts {
			name := st.GetPath()[strings.LastIndexByte(st.GetPath(), '/')+1:]
			if !strings.HasPrefix(name, base) {
				continue
			}
			e := dir + "/" + name
			if st.GetIsDirectory() {
				e += "/"
			}
			out = append(out, e)
		}
	}
	return out, cobra.ShellCompDirectiveNoSpace | cobra.ShellCompDirectiveNoFileComp
}
