package buildinfo

import (
	"strings"
	"testing"
)

func TestResolveLinkerWins(t *testing.T) {
	called := false
	info := resolve("v1.2.3", "0123456789abcdef0123", "2026-01-02T03:04:05Z", func() (string, map[string]string) {
		called = true
		return "v9.9.9", map[string]string{"vcs.revision": "ffff"}
	})
	if called {
		t.Error("toolchain record read although the linker set every field")
	}
	if info.Version != "v1.2.3" || info.Commit != "0123456789abcdef0123" || info.Date != "2026-01-02T03:04:05Z" {
		t.Errorf("got %+v", info)
	}
	if got := info.ShortCommit(); got != "0123456789ab" {
		t.Errorf("ShortCommit = %q", got)
	}
	if s := info.String(); !strings.HasPrefix(s, "strato v1.2.3 (commit 0123456789ab, 2026-01-02T03:04:05Z, go") {
		t.Errorf("String = %q", s)
	}
}

func TestResolveFromToolchain(t *testing.T) {
	info := resolve("", "", "", func() (string, map[string]string) {
		return "(devel)", map[string]string{"vcs.revision": "abcdef0123456789", "vcs.time": "2026-05-06T07:08:09Z", "vcs.modified": "true"}
	})
	if info.Version != "dev" || info.Commit != "abcdef0123456789-dirty" || info.Date != "2026-05-06T07:08:09Z" {
		t.Errorf("got %+v", info)
	}
	if got := info.ShortCommit(); got != "abcdef012345-dirty" {
		t.Errorf("ShortCommit = %q", got)
	}
	info = resolve("", "", "", func() (string, map[string]string) { return "v0.4.0", nil })
	if info.Version != "v0.4.0" || info.Commit != "unknown" || info.Date != "unknown" {
		t.Errorf("go install's module version: got %+v", info)
	}
}

func TestGetHasGoVersion(t *testing.T) {
	if info := Get(); !strings.HasPrefix(info.GoVersion, "go") || info.Version == "" {
		t.Errorf("Get() = %+v", info)
	}
}
