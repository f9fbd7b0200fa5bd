package main

import (
	"flag"
	"fmt"
	"os"
)

func main() {
	tests := flag.String("tests", "../alerts_test.yml", "test file (promtool's format) naming the rule files")
	flag.Parse()
	n, err := check(*tests)
	if err != nil {
		fmt.Fprintln(os.Stderr, "alert rules:", err)
		os.Exit(1)
	}
	fmt.Printf("alert rules: %s: %d test groups passed\n", *tests, n)
}
