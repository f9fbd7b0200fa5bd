// Package buildinfo says which build of strato is running: its version,
// the commit it was built from and that commit's date. make build and make
// dist stamp them with the linker's -X flag (Makefile: LDFLAGS); a binary
// built otherwise (go build, go install) falls back on what the Go
// toolchain recorded (the module's version, vcs.revision and vcs.time), and
// then on "dev" and "unknown".
//
// The date is the commit's, not the time of the build, so that the same
// sources build the same bytes (docs/decisions/0079-release-artifacts.md).
package buildinfo

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
)

// Set by the linker: -X github.com/strato-io/strato/internal/buildinfo.version=...
var (
	version = ""
	commit  = ""
	date    = ""
)

// Info is one build's identity.
type Info struct {
	Version   string // git describe --tags --always --dirty, e.g. v0.3.0-12-gabc1234; "dev" if unknown
	Commit    string // full commit hash; "unknown" if unknown
	Date      string // the commit's date, RFC 3339 in UTC; "unknown" if unknown
	GoVersion string // the toolchain that built the binary (runtime.Version)
}

// Get returns the running binary's Info.
func Get() Info {
	return resolve(version, commit, date, readToolchain)
}

// readToolchain is what the Go toolchain recorded in the binary: the main
// module's version and its VCS settings.
func readToolchain() (modVersion string, settings map[string]string) {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "", nil
	}
	settings = map[string]string{}
	for _, s := range bi.Settings {
		settings[s.Key] = s.Value
	}
	return bi.Main.Version, settings
}

// resolve fills what the linker did not set from the toolchain's record,
// then from the defaults.
func resolve(v, c, d string, toolchain func() (string, map[string]string)) Info {
	info := Info{Version: v, Commit: c, Date: d, GoVersion: runtime.Version()}
	if v == "" || c == "" || d == "" {
		modVersion, s := toolchain()
		if info.Version == "" && modVersion != "" && modVersion != "(devel)" {
			info.Version = modVersion
		}
		if info.Commit == "" {
			info.Commit = s["vcs.revision"]
			if info.Commit != "" && s["vcs.modified"] == "true" {
				info.Commit += "-dirty"
			}
		}
		if info.Date == "" {
			info.Date = s["vcs.time"]
		}
	}
	if info.Version == "" {
		info.Version = "dev"
	}
	if info.Commit == "" {
		info.Commit = "unknown"
	}
	if info.Date == "" {
		info.Date = "unknown"
	}
	return info
}

// ShortCommit is the commit's first 12 hex digits (all of it if shorter).
func (i Info) ShortCommit() string {
	c, dirty := strings.CutSuffix(i.Commit, "-dirty")
	if len(c) > 12 {
		c = c[:12]
	}
	if dirty {
		c += "-dirty"
	}
	return c
}

// String is the one line `strato version` prints:
//
//	strato v0.3.0 (commit 0123456789ab, 2026-11-28T16:30:42Z, go1.25.4 linux/amd64)
func (i Info) String() string {
	return fmt.Sprintf("strato %s (commit %s, %s, %s %s/%s)", i.Version, i.ShortCommit(), i.Date, i.GoVersion, runtime.GOOS, runtime.GOARCH)
}
