package lint

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestRulesCanFail runs each rule's checker over a file of testdata/ that
// breaks it, placed where the rule applies, so that no rule passes by
// checking nothing; the same files also hold what each rule must accept.
func TestRulesCanFail(t *testing.T) {
	for _, tc := range []struct {
		rule  string
		file  string // in testdata/
		as    string // the module path the file pretends to have
		check func([]*srcFile) []finding
		want  []string // "line key: what"
	}{
		{rule: "wall clock", file: "wallclock.go", as: "meta/clock.go", check: checkWallClock, want: []string{
			"10 meta/clock.go:server.expire: time.Now",
			"14 meta/clock.go:wait: time.Sleep",
		}},
		{rule: "wall clock, out of its packages", file: "wallclock.go", as: "meta/consensus/clock.go", check: checkWallClock},
		{rule: "os files", file: "osfile.go", as: "datanode/container/files.go",
			check: func(f []*srcFile) []finding { return checkOSFiles(f, nil, nil) }, want: []string{
				"12 datanode/container/files.go:volume.read: os.Stat",
				"15 datanode/container/files.go:volume.read: os.ReadFile",
			}},
		{rule: "os files, exempt package", file: "osfile.go", as: "minicluster/files.go",
			check: func(f []*srcFile) []finding { return checkOSFiles(f, osFilePackages, nil) }},
		{rule: "prometheus", file: "prometheus.go", as: "s3/metrics.go", check: checkPrometheus, want: []string{
			"4 s3/metrics.go: imports github.com/prometheus/client_golang/prometheus",
		}},
		{rule: "prometheus, in telemetry", file: "prometheus.go", as: "telemetry/metrics.go", check: checkPrometheus},
		{rule: "size", file: "size.go", as: "checksum/big.go",
			check: func(f []*srcFile) []finding { return checkSize(f, 10, 5) }, want: []string{
				"1 checksum/big.go: the file has 11 lines, over 10",
				"5 checksum/big.go:long: long has 7 lines, over 5",
			}},
		{rule: "size, within the limits", file: "size.go", as: "checksum/big.go",
			check: func(f []*srcFile) []finding { return checkSize(f, 11, 7) }},
		{rule: "doc comments", file: "doc.go", as: "wire/doc.go", check: checkDocs, want: []string{
			"6 wire/doc.go:Undocumented: Undocumented is exported and has no doc comment",
			"8 wire/doc.go:Frame: Frame is exported and has no doc comment",
			"10 wire/doc.go:Header: Header is exported and has no doc comment",
			"12 wire/doc.go:Header.Len: Header.Len is exported and has no doc comment",
			"26 wire/doc.go:D: D is exported and has no doc comment",
		}},
		{rule: "doc comments, out of the cores", file: "doc.go", as: "s3/doc.go", check: checkDocs},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			var got []string
			for _, f := range tc.check(testdata(t, tc.file, tc.as)) {
				got = append(got, fmt.Sprintf("%d %s: %s", f.line, f.key, f.what))
			}
			require.Equal(t, tc.want, got)
		})
	}
}

// TestReport: a breach fails with the rule, the file:line, the fix and the
// allowlist entry that would take it; an allowlisted one passes; a stale
// entry fails.
func TestReport(t *testing.T) {
	found := []finding{{path: "meta/clock.go", line: 10, key: "meta/clock.go:server.expire", what: "time.Now"}}
	r := rule{name: "wall clock", fix: "use the Clock", allow: "wallClockAllow"}

	rt := &recorder{}
	r.report(rt, found, nil)
	require.Len(t, rt.errors, 1)
	require.Contains(t, rt.errors[0], `meta/clock.go:10: house rule "wall clock": time.Now`)
	require.Contains(t, rt.errors[0], "fix: use the Clock")
	require.Contains(t, rt.errors[0], `add "meta/clock.go:server.expire" to wallClockAllow`)

	rt = &recorder{}
	r.report(rt, found, map[string]string{"meta/clock.go:server.expire": "a reason"})
	require.Empty(t, rt.errors)

	rt = &recorder{}
	r.report(rt, nil, map[string]string{"meta/clock.go:server.expire": "a reason"})
	require.Len(t, rt.errors, 1)
	require.Contains(t, rt.errors[0], "no longer breaks it: remove the entry")
}

// recorder is the part of testing.TB that rule.report uses, recorded.
type recorder struct{ errors []string }

func (r *recorder) Helper() {}

func (r *recorder) Errorf(format string, args ...any) {
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}
