package lint

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Rule 6, decision records. Every record in docs/decisions is listed in
// design.md's section 10 (an entry "- [NNNN] title" and its link
// "[NNNN]: decisions/file") and in the index of docs/decisions/README.md,
// and every link of either points at a record that exists: design.md is
// the map, and a record it does not name is one a reader will not find.

var recordName = regexp.MustCompile(`^(\d{4})-[a-z0-9-]+\.md$`)

// checkDecisions returns what design and index lack of records (file
// names in docs/decisions) or name that records lack.
func checkDecisions(records []string, design, index string) []string {
	var out []string
	have := map[string]bool{}
	for _, f := range records {
		m := recordName.FindStringSubmatch(f)
		if m == nil {
			continue
		}
		n := m[1]
		have[f] = true
		if !strings.Contains(design, "\n- ["+n+"] ") {
			out = append(out, fmt.Sprintf("design.md: no entry \"- [%s] ...\" in section 10 for %s", n, f))
		}
		if !strings.Contains(design, "\n["+n+"]: decisions/"+f+"\n") {
			out = append(out, fmt.Sprintf("design.md: no link \"[%s]: decisions/%s\"", n, f))
		}
		if !strings.Contains(index, "| "+n+" | [") || !strings.Contains(index, "]("+f+")") {
			out = append(out, fmt.Sprintf("decisions/README.md: no index row for %s", f))
		}
	}
	for _, m := range regexp.MustCompile(`\]: decisions/(\S+\.md)`).FindAllStringSubmatch(design, -1) {
		if !have[m[1]] {
			out = append(out, fmt.Sprintf("design.md: link to decisions/%s, which does not exist", m[1]))
		}
	}
	for _, m := range regexp.MustCompile(`\]\((\d{4}-[a-z0-9-]+\.md)\)`).FindAllStringSubmatch(index, -1) {
		if !have[m[1]] {
			out = append(out, fmt.Sprintf("decisions/README.md: link to %s, which does not exist", m[1]))
		}
	}
	return out
}

func TestDecisionRecordsListed(t *testing.T) {
	dir := filepath.Join("..", "..", "docs")
	ents, err := os.ReadDir(filepath.Join(dir, "decisions"))
	require.NoError(t, err)
	var records []string
	for _, e := range ents {
		records = append(records, e.Name())
	}
	sort.Strings(records)
	design, err := os.ReadFile(filepath.Join(dir, "design.md"))
	require.NoError(t, err)
	index, err := os.ReadFile(filepath.Join(dir, "decisions", "README.md"))
	require.NoError(t, err)
	for _, what := range checkDecisions(records, string(design), string(index)) {
		t.Errorf("house rule \"decision records\": %s", what)
	}
}

func TestDecisionRecordsCanFail(t *testing.T) {
	records := []string{"0001-one.md", "0002-two.md", "README.md"}
	design := "## 10\n- [0001] One\n\n[0001]: decisions/0001-one.md\n[0003]: decisions/0003-three.md\n"
	index := "| 0001 | [One](0001-one.md) | accepted |\n| 0004 | [Four](0004-four.md) | accepted |\n"
	require.Equal(t, []string{
		"design.md: no entry \"- [0002] ...\" in section 10 for 0002-two.md",
		"design.md: no link \"[0002]: decisions/0002-two.md\"",
		"decisions/README.md: no index row for 0002-two.md",
		"design.md: link to decisions/0003-three.md, which does not exist",
		"decisions/README.md: link to 0004-four.md, which does not exist",
	}, checkDecisions(records, design, index))
	require.Empty(t, checkDecisions(records[:1], design[:strings.Index(design, "[0003]")], index[:strings.Index(index, "| 0004")]))
}
