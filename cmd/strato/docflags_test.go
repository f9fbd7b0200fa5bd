package main

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestOperationsDocListsEveryFlag: docs/operations.md's "Every flag" shows
// each server's --help as it is: every flag line of strato meta, datanode
// and s3 is there word for word.
func TestOperationsDocListsEveryFlag(t *testing.T) {
	doc, err := os.ReadFile("../../docs/operations.md")
	require.NoError(t, err)
	for _, role := range []string{"meta", "datanode", "s3"} {
		r := execute(nil, role, "--help")
		require.Equal(t, 0, r.code, r.stderr)
		for _, line := range strings.Split(r.stdout, "\n") {
			if !strings.HasPrefix(line, "      --") { // a flag line (-h, --help is left out)
				continue
			}
			require.Contains(t, string(doc), line+"\n", "docs/operations.md, strato %s: the flag line is not there as --help prints it", role)
		}
	}
}
