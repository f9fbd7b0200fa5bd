package main

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/pelletier/go-toml/v2"
	"github.com/pelletier/go-toml/v2/unstable"
	"github.com/spf13/pflag"
)

// configFile is a server configuration file (--config): TOML, a table per
// role ([meta], [datanode], [s3], [dev]), so that one file may serve every
// role of a host, each table's keys the names of its role's flags:
//
//	[meta]
//	listen = "127.0.0.1:9860"
//	trash-interval = "24h"
//
// The file is checked whole whichever role reads it: an unknown table or
// key, a value of the wrong TOML type or one the flag refuses is an error
// naming the file and line.
type configFile struct {
	path   string
	tables map[string]map[string]fileSetting // role → flag name → setting
}

// fileSetting is one key of a role's table: its value as go-toml decodes
// it (string, int64, float64, bool, []any, ...) and its line.
type fileSetting struct {
	value any
	line  int
}

// lineError is an error of a configuration file at a line.
type lineError struct {
	line int
	msg  string
}

// readConfigFile reads and checks the configuration file at path.
func readConfigFile(path string) (*configFile, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, usagef("--config: %v", err)
	}
	var doc map[string]any
	if err := toml.Unmarshal(data, &doc); err != nil {
		var de *toml.DecodeError
		if errors.As(err, &de) {
			line, _ := de.Position()
			return nil, usagef("%s:%d: %s", path, line, strings.TrimPrefix(de.Error(), "toml: "))
		}
		return nil, usagef("%s: %v", path, err)
	}
	lines := keyLines(data)
	f := &configFile{path: path, tables: map[string]map[string]fileSetting{}}
	var errs []lineError
	for name, v := range doc {
		t, ok := v.(map[string]any)
		switch {
		case serverRoles[name] == nil && ok:
			errs = append(errs, lineError{lines[name], fmt.Sprintf("unknown table [%s]: the tables are %s", name, roleTables())})
		case serverRoles[name] == nil:
			errs = append(errs, lineError{lines[name], fmt.Sprintf("%s is outside the roles' tables (%s)", name, roleTables())})
		case !ok:
			errs = append(errs, lineError{lines[name], fmt.Sprintf("%s: a role's settings are one table, [%s]", name, name)})
		default:
			tab := map[string]fileSetting{}
			for k, kv := range t {
				tab[k] = fileSetting{value: kv, line: lines[name+"\x00"+k]}
			}
			f.tables[name] = tab
		}
	}
	for role := range f.tables {
		errs = append(errs, f.check(role)...)
	}
	if len(errs) > 0 {
		sort.Slice(errs, func(i, j int) bool { return errs[i].line < errs[j].line })
		return nil, usagef("%s:%d: %s", path, errs[0].line, errs[0].msg)
	}
	return f, nil
}

// roleTables lists the tables a file may have.
func roleTables() string {
	var names []string
	for name := range serverRoles {
		names = append(names, "["+name+"]")
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}

// check sets the flags of a new command of role from the role's table:
// every key must be a flag and every value one the flag takes.
func (f *configFile) check(role string) []lineError {
	fs := serverRoles[role]().Flags()
	var errs []lineError
	for name, s := range f.tables[role] {
		fl := fs.Lookup(name)
		if fl == nil || slices.Contains(notSettings, name) {
			errs = append(errs, lineError{s.line, fmt.Sprintf("[%s] %s: unknown setting (strato %s has no --%s)", role, name, role, name)})
			continue
		}
		if err := setFromFile(fs, fl, s); err != nil {
			errs = append(errs, lineError{s.line, fmt.Sprintf("[%s] %s: %v", role, name, err)})
		}
	}
	return errs
}

// setting returns the role's setting of the flag name, if the file (which
// may be nil: no file) has one.
func (f *configFile) setting(role, name string) (fileSetting, bool) {
	if f == nil {
		return fileSetting{}, false
	}
	s, ok := f.tables[role][name]
	return s, ok
}

// apply sets fl of fs, a flag of role, to its setting s in the file.
func (f *configFile) apply(fs *pflag.FlagSet, role string, fl *pflag.Flag, s fileSetting) error {
	if err := setFromFile(fs, fl, s); err != nil {
		return usagef("%s:%d: [%s] %s: %v", f.path, s.line, role, fl.Name, err)
	}
	return nil
}

// setFromFile sets fl to the value of s, which must be of the TOML type
// the flag is written in (tomlKind).
func setFromFile(fs *pflag.FlagSet, fl *pflag.Flag, s fileSetting) error {
	args, err := fileArgs(tomlKind(fl), s.value)
	if err != nil {
		return err
	}
	return setFlag(fs, fl, args)
}

// fileArgs turns a value of the file into the arguments of a flag written
// in TOML as kind.
func fileArgs(kind string, v any) ([]string, error) {
	switch x := v.(type) {
	case string:
		if kind == "string" {
			return []string{x}, nil
		}
	case bool:
		if kind == "boolean" {
			return []string{strconv.FormatBool(x)}, nil
		}
	case int64:
		if kind == "integer" || kind == "float" {
			return []string{strconv.FormatInt(x, 10)}, nil
		}
	case float64:
		if kind == "float" {
			return []string{strconv.FormatFloat(x, 'g', -1, 64)}, nil
		}
	case []any:
		if kind == "array" {
			args := make([]string, 0, len(x))
			for _, e := range x {
				s, ok := e.(string)
				if !ok {
					return nil, fmt.Errorf("want an array of strings, not one holding %s", tomlTypeOf(e))
				}
				args = append(args, s)
			}
			return args, nil
		}
	}
	want := "a " + kind
	if kind == "integer" || kind == "array" {
		want = "an " + kind
	}
	if kind == "array" {
		want += " of strings"
	}
	return nil, fmt.Errorf("want %s, not %s", want, tomlTypeOf(v))
}

// tomlTypeOf names the TOML type of a value go-toml decoded.
func tomlTypeOf(v any) string {
	switch v.(type) {
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case int64:
		return "an integer"
	case float64:
		return "a float"
	case []any:
		return "an array"
	case map[string]any:
		return "a table"
	case time.Time, toml.LocalDate, toml.LocalTime, toml.LocalDateTime:
		return "a date or time"
	}
	return fmt.Sprintf("%T", v)
}

// keyLines maps every table and key of a TOML document, and every prefix
// of their dotted paths, to the line it first appears on; the parts of a
// path are joined by NUL.
func keyLines(data []byte) map[string]int {
	lines := map[string]int{}
	var p unstable.Parser
	p.Reset(data)
	var table []string
	for p.NextExpression() {
		e := p.Expression()
		var key []string
		line := 0
		for it := e.Key(); it.Next(); {
			if line == 0 {
				line = p.Shape(it.Node().Raw).Start.Line
			}
			key = append(key, string(it.Node().Data))
		}
		var path []string
		switch e.Kind {
		case unstable.Table, unstable.ArrayTable:
			table, path = key, key
		case unstable.KeyValue:
			path = append(slices.Clone(table), key...)
		default:
			continue
		}
		for i := 1; i <= len(path); i++ {
			if k := strings.Join(path[:i], "\x00"); lines[k] == 0 {
				lines[k] = line
			}
		}
	}
	return lines
}
