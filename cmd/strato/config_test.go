package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/pelletier/go-toml/v2"
	"github.com/spf13/pflag"
	"github.com/stretchr/testify/require"

	"github.com/strato-io/strato/client"
)

// writeFile writes content to name in a new directory and returns its path.
func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(p, []byte(content), 0o600))
	return p
}

// printConfig runs `strato ROLE --print-config ARGS...` and returns its
// settings (as TOML decodes them) and the source each line names.
func printConfig(t *testing.T, role string, args ...string) (values map[string]any, sources map[string]string, out string) {
	t.Helper()
	r := execute(nil, append([]string{role, "--print-config"}, args...)...)
	require.Equal(t, 0, r.code, r.stderr)
	var doc map[string]map[string]any
	require.NoError(t, toml.Unmarshal([]byte(r.stdout), &doc), r.stdout)
	sources = map[string]string{}
	for _, line := range strings.Split(r.stdout, "\n") {
		if k, rest, ok := strings.Cut(line, " = "); ok {
			_, src, _ := strings.Cut(rest, "  # ")
			sources[k] = src
		}
	}
	return doc[role], sources, r.stdout
}

// TestConfigPrecedence: a flag on the command line beats the environment,
// which beats the file, which beats the default; each setting says where
// it came from.
func TestConfigPrecedence(t *testing.T) {
	file := writeFile(t, "strato.toml", `
[meta]
trash-interval = "3h"    # also in env and on the command line
dead-after = "3m"        # also in env
stale-after = "33s"      # only here
data = "/srv/meta"
auth = "none"
`)
	t.Setenv("STRATO_META_TRASH_INTERVAL", "2h")
	t.Setenv("STRATO_META_DEAD_AFTER", "2m")
	t.Setenv("STRATO_META_ID", "7")
	values, sources, _ := printConfig(t, "meta", "--config", file, "--trash-interval", "1h")
	for _, c := range []struct{ key, value, source string }{
		{"trash-interval", "1h0m0s", "flag"},
		{"dead-after", "2m0s", "env STRATO_META_DEAD_AFTER"},
		{"stale-after", "33s", "file " + file + ":5"},
		{"data", "/srv/meta", "file " + file + ":6"},
		{"election-timeout", "1s", "default"},
		{"auth", "none", "file " + file + ":7"},
	} {
		require.Equal(t, c.value, values[c.key], c.key)
		require.Equal(t, c.source, sources[c.key], c.key)
	}
	require.Equal(t, int64(7), values["id"])
	require.Equal(t, "env STRATO_META_ID", sources["id"])

	// --config itself may come from the environment.
	t.Setenv("STRATO_META_CONFIG", file)
	values, _, _ = printConfig(t, "meta")
	require.Equal(t, "33s", values["stale-after"])
}

// TestConfigEnvNames: a flag's variable is STRATO_<ROLE>_<FLAG>, upper
// case, dashes as underscores; a list takes comma-separated elements.
func TestConfigEnvNames(t *testing.T) {
	require.Equal(t, "STRATO_META_TRASH_INTERVAL", envName("meta", "trash-interval"))
	require.Equal(t, "STRATO_S3_KEY_CACHE_TTL", envName("s3", "key-cache-ttl"))
	require.Equal(t, "STRATO_DATANODE_SCAN_BANDWIDTH", envName("datanode", "scan-bandwidth"))
	t.Setenv("STRATO_DATANODE_DATA", "/disk1/strato,/disk2/strato")
	t.Setenv("STRATO_DATANODE_BUFFERED_IO", "true")
	t.Setenv("STRATO_DEV_DATANODES", "5")
	values, sources, _ := printConfig(t, "datanode")
	require.Equal(t, []any{"/disk1/strato", "/disk2/strato"}, values["data"])
	require.Equal(t, true, values["buffered-io"])
	require.Equal(t, "env STRATO_DATANODE_DATA", sources["data"])
	values, _, _ = printConfig(t, "dev")
	require.Equal(t, int64(5), values["datanodes"])

	t.Setenv("STRATO_DATANODE_HEARTBEAT_INTERVAL", "soon")
	r := execute(nil, "datanode", "--print-config")
	require.Equal(t, 2, r.code)
	require.Contains(t, r.stderr, `$STRATO_DATANODE_HEARTBEAT_INTERVAL: invalid argument "soon" for "--heartbeat-interval" flag`)
}

// TestConfigErrors: what a file cannot say is refused, naming the file
// and the line, whichever role's table it is in.
func TestConfigErrors(t *testing.T) {
	for _, c := range []struct{ name, file, want string }{
		{"unknown key", "[meta]\nlisten = \"127.0.0.1:1\"\n\nlisen = \"x\"\n", ":4: [meta] lisen: unknown setting (strato meta has no --lisen)"},
		{"wrong type", "[meta]\nid = \"one\"\n", ":2: [meta] id: want an integer, not a string"},
		{"bad value", "[meta]\n\ntrash-interval = \"1 day\"\n", `:3: [meta] trash-interval: invalid argument "1 day" for "--trash-interval" flag`},
		{"bad log level", "[meta]\nlog-level = \"loud\"\n", `:2: [meta] log-level: invalid argument "loud"`},
		{"not a list", "[datanode]\ndata = \"/d1\"\n", ":2: [datanode] data: want an array of strings, not a string"},
		{"another role's table", "[meta]\nlisten = \"127.0.0.1:1\"\n[s3]\nvolume = 5\n", ":4: [s3] volume: want a string, not an integer"},
		{"unknown table", "[meta]\n[gateway]\nlisten = \"x\"\n", ":2: unknown table [gateway]: the tables are [datanode], [dev], [meta], [s3]"},
		{"outside a table", "listen = \"x\"\n[meta]\n", ":1: listen is outside the roles' tables"},
		{"array of tables", "[[meta]]\nlisten = \"x\"\n", ":1: meta: a role's settings are one table, [meta]"},
		{"dotted key", "[meta]\ntls.ca = \"x\"\n", ":2: [meta] tls: unknown setting"},
		{"not a setting", "[meta]\nconfig = \"other.toml\"\n", ":2: [meta] config: unknown setting"},
		{"syntax", "[meta]\nlisten = \n", ":2: unexpected character"},
		{"twice", "[meta]\nid = 1\nid = 2\n", ":3: key id is already defined"},
	} {
		t.Run(c.name, func(t *testing.T) {
			file := writeFile(t, "strato.toml", c.file)
			r := execute(nil, "meta", "--config", file, "--print-config")
			require.Equal(t, 2, r.code, r.stdout)
			require.Contains(t, r.stderr, "strato: "+file+c.want)
			require.Empty(t, r.stdout)
		})
	}
	r := execute(nil, "meta", "--config", filepath.Join(t.TempDir(), "none.toml"))
	require.Equal(t, 2, r.code)
	require.Contains(t, r.stderr, "--config: open ")
	// A required flag may come from anywhere; from nowhere it is a usage error.
	r = execute(nil, "datanode")
	require.Equal(t, 2, r.code)
	require.Contains(t, r.stderr, `required flag(s) "data" not set (on the command line, in $STRATO_DATANODE_DATA or in the [datanode] table of --config)`)
}

// TestPrintConfig: every setting of every role is printed, the output is a
// configuration file that gives the same settings back (every flag is
// reachable from the file), so are the same values in the environment,
// and secrets are masked.
func TestPrintConfig(t *testing.T) {
	for role := range serverRoles {
		t.Run(role, func(t *testing.T) {
			values, sources, out := printConfig(t, role)
			cmd := serverRoles[role]()
			n := 0
			for name := range sources {
				require.NotNil(t, cmd.Flags().Lookup(name), name)
				n++
			}
			cmd.Flags().VisitAll(func(fl *pflag.Flag) {
				if _, ok := values[fl.Name]; !ok {
					require.Contains(t, notSettings, fl.Name, "--%s is not printed", fl.Name)
				}
			})
			require.NotContains(t, out, "print-config =")
			// Fed back as the file, the output sets every flag to the value it shows.
			again, srcs, _ := printConfig(t, role, "--config", writeFile(t, "printed.toml", out))
			require.Equal(t, values, again)
			for name, src := range srcs {
				require.True(t, strings.HasPrefix(src, "file "), "%s: %s", name, src)
			}
			require.Len(t, srcs, n)
			// So does the environment, a variable a flag.
			for name, v := range values {
				s := fmt.Sprint(v)
				if list, ok := v.([]any); ok {
					var elems []string
					for _, e := range list {
						elems = append(elems, fmt.Sprint(e))
					}
					s = strings.Join(elems, ",")
				}
				t.Setenv(envName(role, name), s)
			}
			again, srcs, _ = printConfig(t, role)
			require.Equal(t, values, again)
			for name, src := range srcs {
				require.Equal(t, "env "+envName(role, name), src)
			}
		})
	}

	file := writeFile(t, "strato.toml", "[meta]\nconsole-token = \"s3cr3t-console\"\n")
	t.Setenv("STRATO_S3_TOKEN", "s3cr3t-gateway")
	values, sources, out := printConfig(t, "meta", "--config", file)
	require.Equal(t, "****", values["console-token"])
	require.Equal(t, "file "+file+":2", sources["console-token"])
	require.NotContains(t, out, "s3cr3t")
	values, _, out = printConfig(t, "s3")
	require.Equal(t, "****", values["token"])
	require.Equal(t, "", values["token-file"])
	require.NotContains(t, out, "s3cr3t")
	require.Regexp(t, regexp.MustCompile(`(?m)^token = '\*\*\*\*'  # env STRATO_S3_TOKEN$`), out)
}

// TestLogFlags: --log-level and --log-format build every role's logger;
// json lines parse as JSON.
func TestLogFlags(t *testing.T) {
	var lf logFlags
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	lf.add(fs, slog.LevelDebug)
	require.NoError(t, fs.Parse([]string{"--log-level", "warn", "--log-format", "json"}))
	var buf bytes.Buffer
	log := lf.logger(&buf)
	log.Info("hidden")
	log.Warn("shown", "n", 1, "d", time.Second)
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	require.Len(t, lines, 1)
	var m map[string]any
	require.NoError(t, json.Unmarshal([]byte(lines[0]), &m))
	require.Equal(t, "shown", m["msg"])
	require.Equal(t, "WARN", m["level"])
	require.Error(t, fs.Parse([]string{"--log-format", "xml"}))
	require.Error(t, fs.Parse([]string{"--log-level", "verbose"}))

	for role := range serverRoles {
		_, sources, _ := printConfig(t, role, "--log-level", "debug", "--log-format", "json")
		require.Equal(t, "flag", sources["log-level"], role)
		require.Equal(t, "flag", sources["log-format"], role)
	}
}

// TestMetaConfigFile: `strato meta --config FILE` runs with the file's
// settings (its address, its replica ID) and the environment's.
func TestMetaConfigFile(t *testing.T) {
	addr := freePort(t)
	file := writeFile(t, "strato.toml", `# one file for the host's roles
[meta]
data = "`+filepath.Join(t.TempDir(), "meta")+`"
listen = "`+addr+`"
id = 4
auth = "none"

[datanode]
data = ["/disk1/strato"]
`)
	t.Setenv("STRATO_META_RAFT_TICK", "20ms")
	t.Setenv("STRATO_META_LOG_LEVEL", "warn")
	startCmd(t, "meta", "--config", file)
	h := &cliHarness{t: t, addr: addr}
	require.Eventually(t, func() bool {
		return regexp.MustCompile(`\n4 +` + addr + ` +leader +4 `).MatchString(h.run("admin", "meta", "status").stdout)
	}, 20*time.Second, 50*time.Millisecond)
}

// TestOperationsDocConfigExamples: the example files of docs/operations.md
// ("Configuration") are read by every role, and by the CLI.
func TestOperationsDocConfigExamples(t *testing.T) {
	doc, err := os.ReadFile("../../docs/operations.md")
	require.NoError(t, err)
	sec := string(doc)[strings.Index(string(doc), "## Configuration\n"):]
	sec = sec[:strings.Index(sec, "\n## ")]
	blocks := regexp.MustCompile("(?s)```toml\n(.*?)```").FindAllStringSubmatch(sec, -1)
	require.Len(t, blocks, 2)
	file := writeFile(t, "strato.toml", blocks[0][1])
	for role := range serverRoles {
		_, sources, _ := printConfig(t, role, "--config", file)
		require.Contains(t, sources["listen"]+sources["data"], "file ", role)
	}
	dir := clientFile(t, blocks[1][1])
	c, err := client.ReadConfig(filepath.Join(dir, "config.toml"))
	require.NoError(t, err)
	require.Equal(t, "prod", c.Default)
	require.Equal(t, filepath.Join(dir, "prod.token"), c.Clusters["prod"].TokenFile)
}
