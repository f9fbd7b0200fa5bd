package main

// The settings of a server role (strato meta, datanode, s3, dev) come from
// four places, in this order of precedence: a flag on the command line,
// the environment ($STRATO_<ROLE>_<FLAG>), the role's table of the TOML
// file of --config, and the flag's default. Every flag is reachable from
// each of them: the environment and the file are applied to the flags
// the command line left alone, through the flag's own Set, so a value is
// parsed and checked the same way wherever it comes from (decision 0077).
// --print-config shows the result.

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/pelletier/go-toml/v2"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// serverRoles are the roles a configuration file has a table for, with
// the command each is built by: a file is checked whole, every table
// against its role's flags, whichever role reads it.
var serverRoles = map[string]func() *cobra.Command{}

func init() {
	serverRoles["meta"] = newMetaCmd
	serverRoles["datanode"] = newDatanodeServerCmd
	serverRoles["s3"] = newS3Cmd
	serverRoles["dev"] = newDevCmd
}

// secretAnnotation marks a flag whose value is a secret: --print-config
// shows it as "****".
const secretAnnotation = "strato-secret"

// markSecret marks the flag name of f as carrying a secret.
func markSecret(f *pflag.FlagSet, name string) {
	_ = f.SetAnnotation(name, secretAnnotation, []string{"true"})
}

// notSettings are the flags that are not settings: neither the file nor
// the environment sets them (--config itself comes from the command line
// or the environment).
var notSettings = []string{"config", "print-config", "help"}

// roleConfig is what every server role has besides its own flags:
// --config, --print-config, --log-level, --log-format and --otlp-endpoint,
// and where each flag's value came from.
type roleConfig struct {
	role        string
	path        string // --config
	print       bool   // --print-config
	log         logFlags
	otlp        string            // --otlp-endpoint
	stopTracing func()            // stops what startTracing started (nil: nothing)
	required    []string          // the flags the role cannot run without
	sources     map[string]string // flag name → "flag", "env NAME", "file PATH:LINE" or "default"
}

// attach adds the shared flags to cmd, the command of role, and makes its
// RunE apply the environment and the file before it runs (or print the
// settings instead, with --print-config). Call it last, after the role's
// own flags and MarkFlagRequired: it takes the required flags over, as
// they may come from the environment or the file, which cobra's own check
// (before RunE) knows nothing of.
func (rc *roleConfig) attach(cmd *cobra.Command, role string, level slog.Level) {
	rc.role = role
	f := cmd.Flags()
	f.StringVar(&rc.path, "config", "", "TOML file of settings, its ["+role+"] table keyed by the flags' names (docs/operations.md, Configuration); a flag beats $"+envPrefix(role)+"<FLAG>, which beats the file")
	f.BoolVar(&rc.print, "print-config", false, "print every setting as TOML with where it comes from (flag, env, file or default), secrets masked, and exit")
	rc.log.add(f, level)
	addTracingFlag(f, &rc.otlp)
	f.VisitAll(func(fl *pflag.Flag) {
		if ann := fl.Annotations[cobra.BashCompOneRequiredFlag]; len(ann) == 1 && ann[0] == "true" {
			rc.required = append(rc.required, fl.Name)
			delete(fl.Annotations, cobra.BashCompOneRequiredFlag)
		}
	})
	run := cmd.RunE
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if err := rc.load(cmd.Flags()); err != nil {
			return err
		}
		if rc.print {
			return rc.write(cmd.OutOrStdout(), cmd.Flags())
		}
		var missing []string
		for _, name := range rc.required {
			if rc.sources[name] == "default" {
				missing = append(missing, name)
			}
		}
		if len(missing) > 0 {
			return usagef(`required flag(s) "%s" not set (on the command line, in $%s or in the [%s] table of --config)`,
				strings.Join(missing, `", "`), envName(role, missing[0]), role)
		}
		defer func() {
			if rc.stopTracing != nil {
				rc.stopTracing()
			}
		}()
		return run(cmd, args)
	}
}

// from says where the flag name's value came from: "flag", "env NAME",
// "file PATH:LINE" or "default".
func (rc *roleConfig) from(name string) string { return rc.sources[name] }

// envName is the environment variable of a role's flag:
// STRATO_<ROLE>_<FLAG>, upper case, dashes as underscores.
func envName(role, flag string) string {
	return envPrefix(role) + strings.ToUpper(strings.ReplaceAll(flag, "-", "_"))
}

// envPrefix is what the environment variables of a role's flags start
// with: STRATO_<ROLE>_.
func envPrefix(role string) string { return "STRATO_" + strings.ToUpper(role) + "_" }

// load applies the environment and the file of --config (itself from the
// command line or $STRATO_<ROLE>_CONFIG) to the flags of fs the command
// line left alone, and records where every flag's value came from.
func (rc *roleConfig) load(fs *pflag.FlagSet) error {
	rc.sources = map[string]string{}
	if fl := fs.Lookup("config"); fl != nil && !fl.Changed {
		if v, ok := os.LookupEnv(envName(rc.role, "config")); ok {
			rc.path = v
		}
	}
	var file *configFile
	if rc.path != "" {
		var err error
		if file, err = readConfigFile(rc.path); err != nil {
			return err
		}
	}
	var err error
	fs.VisitAll(func(fl *pflag.Flag) {
		if err != nil || slices.Contains(notSettings, fl.Name) {
			return
		}
		if fl.Changed {
			rc.sources[fl.Name] = "flag"
			return
		}
		env := envName(rc.role, fl.Name)
		if v, ok := os.LookupEnv(env); ok {
			if err = setFlag(fs, fl, envArgs(fl, v)); err != nil {
				err = usagef("$%s: %v", env, err)
			}
			rc.sources[fl.Name] = "env " + env
			return
		}
		if s, ok := file.setting(rc.role, fl.Name); ok {
			err = file.apply(fs, rc.role, fl, s)
			rc.sources[fl.Name] = fmt.Sprintf("file %s:%d", file.path, s.line)
			return
		}
		rc.sources[fl.Name] = "default"
	})
	return err
}

// envArgs are the values an environment variable gives a flag: one, or
// for a flag that takes a list (--data of strato datanode), its
// comma-separated elements.
func envArgs(fl *pflag.Flag, v string) []string {
	if _, ok := fl.Value.(pflag.SliceValue); ok {
		if v == "" {
			return []string{}
		}
		return strings.Split(v, ",")
	}
	return []string{v}
}

// setFlag sets fl of fs to args: its one value, or a list's elements.
func setFlag(fs *pflag.FlagSet, fl *pflag.Flag, args []string) error {
	if sv, ok := fl.Value.(pflag.SliceValue); ok {
		if err := sv.Replace(args); err != nil {
			return fmt.Errorf("invalid argument %q for %q flag: %w", args, "--"+fl.Name, err)
		}
		fl.Changed = true
		return nil
	}
	if len(args) != 1 {
		return fmt.Errorf("--%s takes one value, not a list", fl.Name)
	}
	return fs.Set(fl.Name, args[0])
}

// write prints the settings of fs as the [role] table of a configuration
// file, each with where it came from, secrets masked.
func (rc *roleConfig) write(w io.Writer, fs *pflag.FlagSet) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# strato %s: every setting, its value and where it comes from\n", rc.role)
	fmt.Fprintf(&b, "# (flag; env $%s<FLAG>; file --config; default). Secrets show as \"****\".\n", envPrefix(rc.role))
	if rc.path != "" {
		fmt.Fprintf(&b, "# --config %s\n", rc.path)
	}
	fmt.Fprintf(&b, "[%s]\n", rc.role)
	var err error
	fs.VisitAll(func(fl *pflag.Flag) {
		if err != nil || slices.Contains(notSettings, fl.Name) {
			return
		}
		var line []byte
		if line, err = toml.Marshal(map[string]any{fl.Name: settingValue(fl)}); err == nil {
			fmt.Fprintf(&b, "%s  # %s\n", strings.TrimSuffix(string(line), "\n"), rc.sources[fl.Name])
		}
	})
	if err != nil {
		return err
	}
	_, err = io.WriteString(w, b.String())
	return err
}

// settingValue is fl's value as the file would give it: a boolean, an
// integer, an array of strings for a list, else a string; a secret that
// is set shows as "****".
func settingValue(fl *pflag.Flag) any {
	if ann := fl.Annotations[secretAnnotation]; len(ann) > 0 && fl.Value.String() != "" {
		return "****"
	}
	if sv, ok := fl.Value.(pflag.SliceValue); ok {
		return append([]string{}, sv.GetSlice()...)
	}
	s := fl.Value.String()
	switch tomlKind(fl) {
	case "boolean":
		if v, err := strconv.ParseBool(s); err == nil {
			return v
		}
	case "integer":
		if v, err := strconv.ParseInt(s, 10, 64); err == nil {
			return v
		}
		if v, err := strconv.ParseUint(s, 10, 64); err == nil {
			return v
		}
	case "float":
		if v, err := strconv.ParseFloat(s, 64); err == nil {
			return v
		}
	}
	return s
}

// tomlKind is the TOML type a flag's value is written in: "boolean",
// "integer", "float", "array" (of strings) or "string" (durations, sizes
// and everything else the flag parses itself).
func tomlKind(fl *pflag.Flag) string {
	if _, ok := fl.Value.(pflag.SliceValue); ok {
		return "array"
	}
	switch t := fl.Value.Type(); {
	case t == "bool":
		return "boolean"
	case t == "count" || strings.HasPrefix(t, "int") || strings.HasPrefix(t, "uint"):
		return "integer"
	case strings.HasPrefix(t, "float"):
		return "float"
	}
	return "string"
}
