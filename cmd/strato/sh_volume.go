// strato sh volume: create, info, list, delete.

package main

import (
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/strato-io/strato/bytesize"
	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

func newVolumeCmd(o *cliOptions) *cobra.Command {
	cmd := group("volume", "Create, inspect, list, update and delete volumes and set their quotas")
	cmd.AddCommand(newVolumeCreateCmd(o), newVolumeInfoCmd(o), newVolumeListCmd(o), newVolumeDeleteCmd(o), newVolumeUpdateCmd(o))
	cmd.AddCommand(newQuotaCmds(o, volumeQuota)...)
	cmd.AddCommand(newAclCmds(o, aclVolume)...)
	return cmd
}

func newVolumeCreateCmd(o *cliOptions) *cobra.Command {
	var owner, quotaBytes string
	var quotaNS int64
	create := &cobra.Command{
		Use:   "create NAME",
		Short: "Create a volume",
		Args:  exactArgs(1),
		RunE: o.action(func(s *session, args []string) error {
			name, err := volumeArg(args[0])
			if err != nil {
				return err
			}
			req := &stratov1.CreateVolumeRequest{Name: name, Owner: owner, QuotaNamespace: quotaNS}
			if req.QuotaBytes, err = optionalSize("quota-bytes", quotaBytes); err != nil {
				return err
			}
			if quotaNS < 0 {
				return usagef("--quota-namespace: %d is negative", quotaNS)
			}
			v, err := s.c.CreateVolume(s.ctx, req)
			if err != nil {
				return err
			}
			if s.json {
				return printJSON(s.out, v)
			}
			return nil
		}),
	}
	create.Flags().StringVar(&owner, "owner", "", "owner of the volume (default: the current user)")
	create.Flags().StringVar(&quotaBytes, "quota-bytes", "", "most bytes the volume's keys may hold, e.g. 10GB (default: unlimited)")
	create.Flags().Int64Var(&quotaNS, "quota-namespace", 0, "most buckets the volume may hold (default: unlimited)")
	return create
}

func newVolumeInfoCmd(o *cliOptions) *cobra.Command {
	return &cobra.Command{
		Use:   "info NAME",
		Short: "Show a volume",
		Args:  exactArgs(1),
		RunE: o.action(func(s *session, args []string) error {
			name, err := volumeArg(args[0])
			if err != nil {
				return err
			}
			v, err := s.c.GetVolume(s.ctx, name)
			if err != nil {
				return err
			}
			if s.json {
				return printJSON(s.out, v)
			}
			return printFields(s.out, []field{
				{"Name", v.Name},
				{"ID", strconv.FormatUint(v.Id, 10)},
				{"Owner", v.Owner},
				{"Created", timeMs(v.CreationTimeUnixMs)},
				{"Modified", timeMs(v.ModificationTimeUnixMs)},
				{"Used", sizeWithBytes(v.UsedBytes)},
				{"Quota", quota(v.QuotaBytes, true)},
				{"Buckets", strconv.FormatInt(v.UsedNamespace, 10)},
				{"Bucket quota", quota(v.QuotaNamespace, false)},
			})
		}),
	}
}

func newVolumeListCmd(o *cliOptions) *cobra.Command {
	var prefix string
	list := &cobra.Command{
		Use:   "list",
		Short: "List volumes",
		Args:  argsBetween(0, 1),
		RunE: o.action(func(s *session, args []string) error {
			if len(args) == 1 && strings.Trim(args[0], "/") != "" {
				return usagef("list takes no volume (use --prefix)")
			}
			vs, err := s.c.ListVolumes(s.ctx, prefix)
			if err != nil {
				return err
			}
			if s.json {
				return printJSON(s.out, messages(vs))
			}
			rows := make([][]string, 0, len(vs))
			for _, v := range vs {
				rows = append(rows, []string{v.Name, v.Owner, strconv.FormatInt(v.UsedNamespace, 10),
					bytesize.Format(v.UsedBytes), quota(v.QuotaBytes, true), timeMs(v.CreationTimeUnixMs)})
			}
			return printTable(s.out, []string{"NAME", "OWNER", "BUCKETS", "USED", "QUOTA", "CREATED"}, rows)
		}),
	}
	list.Flags().StringVar(&prefix, "prefix", "", "list only volumes whose name starts with this")
	return list
}

func newVolumeDeleteCmd(o *cliOptions) *cobra.Command {
	return &cobra.Command{
		Use:   "delete NAME",
		Short: "Delete an empty volume",
		Args:  exactArgs(1),
		RunE: o.action(func(s *session, args []string) error {
			name, err := volumeArg(args[0])
			if err != nil {
				return err
			}
			return s.c.DeleteVolume(s.ctx, name)
		}),
	}
}

// optionalSize parses a size flag left empty for 0.
func optionalSize(flag, s string) (int64, error) {
	if s == "" {
		return 0, nil
	}
	return parseSize(flag, s)
}

// ---- Buckets --------------------------------------------------------------------
