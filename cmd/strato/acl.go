package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/strato-io/strato/client"
	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

// The ACL commands of `strato sh volume|bucket|key` (docs/security.md,
// "ACLs"): getacl, setacl, addacl, removeacl.

type aclKind int

const (
	aclVolume aclKind = iota
	aclBucket
	aclKey
)

func (k aclKind) noun() string {
	return [...]string{"volume", "bucket", "key"}[k]
}

func (k aclKind) usage() string {
	return [...]string{"/VOLUME", "/VOLUME/BUCKET", "/VOLUME/BUCKET/KEY"}[k]
}

// object parses the object argument of an ACL command.
func (k aclKind) object(arg string) (*stratov1.AclObject, error) {
	switch k {
	case aclVolume:
		v, err := volumeArg(arg)
		if err != nil {
			return nil, err
		}
		return client.VolumeObject(v), nil
	case aclBucket:
		p, err := bucketArg(arg)
		if err != nil {
			return nil, err
		}
		return client.BucketObject(p.Volume, p.Bucket), nil
	}
	p, err := keyArg(arg)
	if err != nil {
		return nil, err
	}
	return client.KeyObject(p.Volume, p.Bucket, p.Key), nil
}

func newAclCmds(o *cliOptions, k aclKind) []*cobra.Command {
	get := &cobra.Command{
		Use:   "getacl " + k.usage(),
		Short: "Show the owner and the ACL of a " + k.noun(),
		Args:  exactArgs(1),
		RunE: o.action(func(s *session, args []string) error {
			obj, err := k.object(args[0])
			if err != nil {
				return err
			}
			owner, acls, err := s.c.GetAcl(s.ctx, obj)
			if err != nil {
				return err
			}
			if s.json {
				return printJSON(s.out, &stratov1.GetAclResponse{Owner: owner, Acls: acls})
			}
			if _, err := fmt.Fprintf(s.out, "Owner: %s\n", owner); err != nil {
				return err
			}
			return printTable(s.out, []string{"TYPE", "NAME", "RIGHTS", "SCOPE"}, aclRows(acls))
		}),
	}
	edit := func(verb, short string, call func(s *session, obj *stratov1.AclObject, acls []*stratov1.Acl) error) *cobra.Command {
		var list, file string
		cmd := &cobra.Command{
			Use:   verb + " " + k.usage() + " --acl ACLS",
			Short: short,
			Args:  exactArgs(1),
			RunE: o.action(func(s *session, args []string) error {
				obj, err := k.object(args[0])
				if err != nil {
					return err
				}
				acls, err := aclFlag(list, file)
				if err != nil {
					return err
				}
				return call(s, obj, acls)
			}),
		}
		cmd.Flags().StringVar(&list, "acl", "", "ACL entries, e.g. user:alice:rw,group:dev:rl[DEFAULT],world::r "+
			"(rights: r READ, w WRITE, c CREATE, d DELETE, l LIST, x READ_ACL, y WRITE_ACL, a ALL, n NONE)")
		cmd.Flags().StringVar(&file, "acl-file", "", "a file of ACL entries, one per line or separated by commas")
		return cmd
	}
	set := edit("setacl", "Replace the ACL of a "+k.noun(), func(s *session, obj *stratov1.AclObject, acls []*stratov1.Acl) error {
		return s.c.SetAcl(s.ctx, obj, acls)
	})
	add := edit("addacl", "Add entries to the ACL of a "+k.noun(), func(s *session, obj *stratov1.AclObject, acls []*stratov1.Acl) error {
		return s.c.AddAcl(s.ctx, obj, acls)
	})
	remove := edit("removeacl", "Remove entries' rights from the ACL of a "+k.noun(), func(s *session, obj *stratov1.AclObject, acls []*stratov1.Acl) error {
		return s.c.RemoveAcl(s.ctx, obj, acls)
	})
	return []*cobra.Command{get, set, add, remove}
}

// aclFlag reads the entries of --acl or --acl-file (one of them).
func aclFlag(list, file string) ([]*stratov1.Acl, error) {
	switch {
	case list != "" && file != "":
		return nil, usagef("give --acl or --acl-file, not both")
	case file != "":
		b, err := os.ReadFile(file)
		if err != nil {
			return nil, usagef("--acl-file: %v", err)
		}
		list = string(b)
	case list == "":
		return nil, usagef("--acl or --acl-file is required")
	}
	acls, err := client.ParseAcls(list)
	if err != nil {
		return nil, usagef("--acl: %v", strings.TrimPrefix(err.Error(), "client: "))
	}
	return acls, nil
}

func aclRows(acls []*stratov1.Acl) [][]string {
	rows := make([][]string, 0, len(acls))
	for _, a := range acls {
		typ := strings.ToLower(strings.TrimPrefix(a.GetType().String(), "ACL_"))
		scope := strings.TrimPrefix(a.GetScope().String(), "ACL_")
		rows = append(rows, []string{typ, a.GetName(), client.FormatRights(a.GetRights()), scope})
	}
	return rows
}
